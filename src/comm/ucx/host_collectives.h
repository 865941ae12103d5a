// The small collectives of a group whose members all run on one host (below the sizes of
// algorithm_choice.h), through the group's shared segment (host_segment.h) instead of UCX messages:
// flag and slot. Each member copies what it contributes into its slot, publishes the call's
// signature (call_check.h) and its arrival, waits for every other member's arrival, compares their
// signatures with its own, reads the slots it needs, and marks them read. An allreduce reduces every
// slot in member order, ((x0 op x1) op x2) ..., as the single-copy schedule does, so every member
// computes the same bits.
//
// What every wait keeps (UcxTransport::check_wait between sleeps): XFFL_TIMEOUT, with the message
// naming this rank, the collective, the group and the rank awaited; a dead peer found through /proc
// (XFFL_EPEER naming it, announced to the job); revoke notices; mismatch notices. Members that called
// with other arguments see each other's signatures in the segment: every member gets XFFL_EINVAL
// naming both values (and the members that took the UCX messages for their call learn of it from the
// notices, or see the signature in the segment through check_elsewhere).
//
// Slots alternate by the parity of the call's sequence number. A member writes its slot of a parity
// again only once every member has marked its previous call of that parity read: after a call on the
// segment that holds at once (every member arrived at it after finishing the one before); after calls
// over UCX in between it may wait.
//
// Setting up (the group's first call that takes the segment, inside that call, over UCX messages):
// member 0 makes the segment and sends every member its pid and descriptor; each member opens and maps
// it and tells every other member whether it could; then member 0 closes its descriptor. When any
// member could not, every member keeps the UCX messages for the group's calls.
#ifndef XFFL_SRC_COMM_UCX_HOST_COLLECTIVES_H
#define XFFL_SRC_COMM_UCX_HOST_COLLECTIVES_H

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "comm/ucx/host_segment.h"
#include "comm/ucx/ucx_transport.h"
#include "xffl/types.h"

namespace xffl::comm::ucx {

class HostCollectives {
 public:
  HostCollectives(int members, int me) : members_(members), me_(me) {}

  // Whether this call may take the segment: sets it up first when this is the first time (every
  // member must call it in the same call). False on every member alike when a member could not make
  // or open it (*why says why on this member, when it knows); then false for good.
  bool ready(UcxTransport &p2p, std::string *why);
  bool set_up() const { return segment_ != nullptr; }

  // The collectives, with the conventions of collectives.h; the buffer sizes must fit the slots
  // (algorithm_choice::host_segment_slot_bytes) and counts must be non-zero.
  void allreduce(UcxTransport &p2p, const CallSignature &signature, const void *send, void *recv, size_t count,
                 xffl_dtype_t dtype, xffl_redop_t op);
  void broadcast(UcxTransport &p2p, const CallSignature &signature, void *buffer, size_t bytes, int root);
  void allgather(UcxTransport &p2p, const CallSignature &signature, const void *send, void *recv, size_t send_count,
                 xffl_dtype_t dtype);
  void reduce_scatter(UcxTransport &p2p, const CallSignature &signature, const void *send, void *recv,
                      size_t recv_count, xffl_dtype_t dtype, xffl_redop_t op);
  void barrier(UcxTransport &p2p, const CallSignature &signature);

  // For a call that takes the UCX messages (p2p's): throws XFFL_EINVAL through p2p when a member
  // waits in the segment for this very call with other arguments (its call took the segment, ours
  // did not). Nothing when no segment is set up.
  void check_elsewhere(UcxTransport &p2p, const CallSignature &signature) const;

 private:
  // Publishes `bytes` of `data` (may be none) as this member's part of the call, then waits for every
  // member's and checks their signatures.
  void enter(UcxTransport &p2p, const CallSignature &signature, const void *data, size_t bytes);
  // spin_end: until when the call may spin on flags, all waits together (then they sleep).
  void wait_for(UcxTransport &p2p, int member, uint32_t sequence, bool done,
                std::chrono::steady_clock::time_point spin_end);
  // out = every member's slot elements [first, first + count) reduced in member order.
  void reduce_slots(UcxTransport &p2p, size_t first, size_t count, xffl_dtype_t dtype, xffl_redop_t op, void *out);

  int members_;
  int me_;
  std::unique_ptr<HostSegment> segment_;
  bool refused_ = false;
  std::optional<uint32_t> last_published_[2];  // by parity: the sequence this member last published
};

}  // namespace xffl::comm::ucx

#endif
