// The collectives of a group whose members all run on one host (algorithm_choice.h's sizes; large
// ones in rounds, below), through the group's shared segment (host_segment.h) instead of UCX
// messages: flag and slot. Each member copies what it contributes into its slot (up to 8 bytes: beside
// its flag, HostSegment::contribution), publishes the call's signature (call_check.h) and its arrival,
// waits for every other member's arrival, compares their signatures with its own, reads the slots it
// needs, and marks them read. An allreduce reduces every slot in member order, ((x0 op x1) op x2) ...,
// as the single-copy schedule does, so every member computes the same bits.
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
// segment that holds at once (every member arrived at it after finishing the one before), and the
// member knows it from those arrivals without reading the flags the others wrote since; after calls
// over UCX in between it may wait.
//
// Pipelined allreduce (large buffers, no page pinned per call, every byte copied by user code): after
// the signatures are compared as above (no data in the slot), the buffer goes through in rounds of
// members x part elements, the slots of both parities taking turns. In a round each member copies
// its operands of the others' parts into its slot ("staged"), reduces its own part reading the
// others' operands from their slots in member order, as above (so the same bits everywhere), into its
// output, copies the result from there into its slot ("reduced"), then copies the others' results
// out of theirs, each right after staging its operand of that member's part of the next round. Every
// write into the segment is a memcpy, which writes a region's lines without first fetching them from
// the core that last read them (host_collectives.cpp, pipelined_allreduce and copy_out_staging).
// Two flag waits per round, each with everything a wait keeps (below); the rounds' flags say when a
// region may be written again (host_collectives.cpp). Each byte of a member's buffer is copied into
// the segment once and each result out once, parts small enough to stay in the cache in between; no
// system call unless a member sleeps, nothing pinned (single copy's process_vm_readv pins the peer's
// pages on every call). A call with a large output (RoundOptions::stream_output) copies the others'
// results into it with streaming stores (comm/streaming_copy.h), which neither read the lines they
// write nor evict the parts the rounds still use (an allreduce's own part is made there by the
// reduction). At the end every member marks the call read, and the next call on the
// segment, whichever parity, writes only once every member has; but a pipelined allreduce right after
// another (a training loop's gradients) goes straight to its rounds, whose flags already say when a
// region is free: its signatures are compared once round 0 is staged, before any slot is read (one
// meeting fewer per call). The large reduce_scatter takes the
// same rounds without the copy out; the large broadcast and allgather take rounds with no reduction:
// each part is copied into its owner's slot (the root's; every member's own block) and out by the
// others, who mark it read ("reduced"), and an owner writes a region again only once every member has
// read it (two rounds before).
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

namespace xffl::comm::algorithms {
class WindowProducer;
}

namespace xffl::comm::ucx {

// How a pipelined call below runs: the most a member's part of a round holds
// (Tuning::host_pipeline_chunk_bytes; less when the slots are smaller), and whether it copies out of
// the segment into the caller's output with streaming stores (comm/streaming_copy.h; from
// algorithm_choice::host_stream_output_from bytes of output).
struct RoundOptions {
  size_t chunk_bytes;
  bool stream_output;
};

// One copy of a round: `bytes` from `from` to `to`, which must not overlap (a staging into the
// segment, or a copy out of it); an empty one's pointers may be null.
struct CopyRange {
  void *to;
  const void *from;
  size_t bytes;
};

class HostCollectives {
 public:
  HostCollectives(int members, int me) : members_(members), me_(me) {}

  // Whether this call may take the segment: sets it up first when this is the first time (every
  // member must call it in the same call). False on every member alike when a member could not make
  // or open it (*why says why on this member, when it knows); then false for good.
  bool ready(UcxTransport &p2p, std::string *why);
  bool set_up() const { return segment_ != nullptr; }
  // How many calls took one of the pipelined schedules below (for tests).
  uint64_t pipelined_calls() const { return pipelined_calls_; }
  // How many of those went to their rounds without meeting first (continue_pipelined_calls; for tests).
  uint64_t continued_calls() const { return continued_calls_; }
  // How many bytes those copied into callers' outputs with streaming stores (RoundOptions; for tests).
  uint64_t streamed_bytes() const { return streamed_bytes_; }
  // How many bytes the pipelined allreduce's reductions made in callers' outputs (each member's own
  // parts, with plain stores; for tests).
  uint64_t reduced_in_output_bytes() const { return reduced_in_output_bytes_; }
  // How many other members' "done" flags this member's calls read before writing their slot (none
  // after a call on the segment; for tests).
  uint64_t done_flags_read() const { return done_flags_read_; }

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
  // The large allreduce (from algorithm_choice::host_pipeline_allreduce_from): any count, in rounds
  // through the slots (see "Pipelined allreduce" above).
  void pipelined_allreduce(UcxTransport &p2p, const CallSignature &signature, const void *send, void *recv,
                           size_t count, xffl_dtype_t dtype, xffl_redop_t op, RoundOptions options);
  // The large reduce_scatter (from algorithm_choice::host_pipeline_reduce_scatter_from): the same
  // rounds over each member's block without copying results out (each member keeps its own), and a
  // member stages round r only once every member has reduced round r - 2 (its regions are free).
  void pipelined_reduce_scatter(UcxTransport &p2p, const CallSignature &signature, const void *send, void *recv,
                                size_t recv_count, xffl_dtype_t dtype, xffl_redop_t op, RoundOptions options);
  // The large broadcast and allgather (from algorithm_choice::host_pipeline_broadcast_from and
  // _allgather_from): rounds of one part of the buffer (broadcast: the root's; allgather: every
  // member's block), copied into the slot by its owner ("staged") and out by the others, who then
  // publish "reduced" (read); an owner stages round r once every member has read round r - 2.
  // producer (broadcast_produced; the root's, or null): the root makes each part final (through())
  // just before it copies it into its slot.
  void pipelined_broadcast(UcxTransport &p2p, const CallSignature &signature, void *buffer, size_t bytes, int root,
                           RoundOptions options, algorithms::WindowProducer *producer = nullptr);
  void pipelined_allgather(UcxTransport &p2p, const CallSignature &signature, const void *send, void *recv,
                           size_t send_count, xffl_dtype_t dtype, RoundOptions options);

  // For a call that takes the UCX messages (p2p's): throws XFFL_EINVAL through p2p when a member
  // waits in the segment for this very call with other arguments (its call took the segment, ours
  // did not). Nothing when no segment is set up.
  void check_elsewhere(UcxTransport &p2p, const CallSignature &signature) const;

 private:
  // Publishes `bytes` of `data` (may be none) as this member's part of the call, then waits for every
  // member's and checks their signatures.
  // step: what a wait names in its errors.
  void enter(UcxTransport &p2p, const CallSignature &signature, const void *data, size_t bytes,
             algorithms::Step step = kSegmentStep);
  // Until member's `flag` reaches `value`; spin_end: until when the call may spin on flags, all waits
  // together (then they sleep). Errors name `step`.
  void wait_for(UcxTransport &p2p, int member, HostSegment::Flag flag, uint32_t value, algorithms::Step step,
                std::chrono::steady_clock::time_point spin_end);
  // wait_for every member but this one, in member order.
  void wait_for_others(UcxTransport &p2p, HostSegment::Flag flag, uint32_t value, algorithms::Step step,
                       std::chrono::steady_clock::time_point spin_end);
  // result = operand(0) op operand(1) ... op operand(members - 1), count elements, in member order,
  // widened through scratch (2 x count accumulation elements) when the type needs it (AVG divides
  // the sum once, in result or in scratch). result may be operand(0)'s or operand(1)'s memory, not a
  // later one's (without widening, the first combination overwrites it).
  template <typename Operand>
  void reduce_operands(const Operand &operand, size_t count, xffl_dtype_t dtype, xffl_redop_t op,
                       unsigned char *scratch, unsigned char *result) const;
  // out = elements [first, first + count) of every member's contribution of `contributed` bytes
  // (HostSegment::contribution) reduced in member order.
  void reduce_slots(UcxTransport &p2p, size_t contributed, size_t first, size_t count, xffl_dtype_t dtype,
                    xffl_redop_t op, void *out);

  // What the pipelined schedules share: every slot cut into one region per member, parts of at most
  // chunk_bytes (one region at most), the steps their waits name (0: the signatures; then two per
  // round), and how they copy into the caller's output.
  struct Pipeline {
    HostSegment *segment = nullptr;
    size_t region_bytes = 0;
    size_t part_elements = 0;
    size_t rounds = 0;
    int total_steps = 1;
    bool stream_output = false;
    // Region `index` of member's slot of `round`'s parity.
    unsigned char *region(int member, uint32_t round, int index) const;
    algorithms::Step step(size_t round, int phase) const;
  };
  // Starts a pipelined call of `count` `element`-byte values, `parts_per_round` parts a round: its
  // pipeline, once every member's signature is checked (enter).
  Pipeline start_pipelined_call(UcxTransport &p2p, const CallSignature &signature, RoundOptions options,
                                size_t element, size_t count, size_t parts_per_round);
  // The same for a pipelined allreduce right after another (the call before it on this group): no
  // meeting, this member publishes its signature and goes on; the caller compares the others' once
  // they have staged round 0 (they published theirs before), before it reads their slots. The
  // rounds' flags already order the slots' reuse from one such call to the next; one meeting fewer
  // per call (two flag waits a round instead of three for a one-round call).
  Pipeline continue_pipelined_calls(UcxTransport &p2p, const CallSignature &signature, RoundOptions options,
                                    size_t element, size_t count, size_t parts_per_round);
  // A call's pipeline: regions, parts and rounds (no waiting, nothing published).
  Pipeline plan_pipeline(RoundOptions options, size_t element, size_t count, size_t parts_per_round) const;
  // XFFL_EINVAL through p2p when member's signature for this call (published) is not `signature`.
  void check_signature(UcxTransport &p2p, int member, const CallSignature &signature) const;
  // Copies `bytes` into the caller's output: with streaming stores when the pipeline's stream_output
  // (counted in streamed_bytes_).
  void copy_out(const Pipeline &plan, unsigned char *to, const unsigned char *from, size_t bytes);
  // The staging copy of `operand` into the segment (memcpy; none when empty), then copy_out of `part`.
  void copy_out_staging(const Pipeline &plan, CopyRange part, CopyRange operand);
  // After the pipelined call's last round.
  void end_pipelined_call(UcxTransport &p2p, const Pipeline &pipeline);

  int members_;
  int me_;
  std::unique_ptr<HostSegment> segment_;
  bool refused_ = false;
  std::optional<uint32_t> last_published_[2];  // by parity: the sequence this member last published
  // The latest call at which enter() saw every member arrive (with its signature). A member arrives at a
  // call only once it has finished reading every slot of the calls before: what "done" flags would say.
  std::optional<uint32_t> last_met_;
  uint64_t done_flags_read_ = 0;
  uint32_t round_ = 0;             // the next round of a pipelined call: the same on every member
  uint64_t pipelined_calls_ = 0;
  uint64_t continued_calls_ = 0;
  uint64_t streamed_bytes_ = 0;
  uint64_t reduced_in_output_bytes_ = 0;
  std::optional<uint32_t> last_pipelined_allreduce_;  // its sequence number, once there was one
  static constexpr algorithms::Step kSegmentStep{0, 1};
};

}  // namespace xffl::comm::ucx

#endif
