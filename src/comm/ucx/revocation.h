// The revoke notice: how a rank that saw a peer fail tells every other member of the job, in the
// spirit of MPI ULFM's MPI_Comm_revoke and NCCL's abort. It travels between the peers themselves
// (never through the store, whose host may be the one that died) as one small UCX tagged message
// with a reserved tag. A rank sends it once per failed rank to every peer it can reach (endpoints
// are made from the address table loaded at set_global, so ranks that never talked still get it),
// and a rank that receives it for a rank it has not announced yet sends it on once: a flood with
// deduplication by failed rank, which reaches every live member even when the first sender dies
// right after sending. UcxWorker does both (announce_failure, poll_revocation); this file is the
// wire format and the two UCX calls.
//
// The tag: group 0xFFFFF, sender kNoticeSender - 1 (reserved: tag.h's kMaxGroupSize stops below
// it), sequence, signature and step 0xFF. Data messages carry a member's index as sender and
// mismatch notices kNoticeSender, so no message of any group carries it, and a probe with the exact
// tag is one hash lookup.
#ifndef XFFL_SRC_COMM_UCX_REVOCATION_H
#define XFFL_SRC_COMM_UCX_REVOCATION_H

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "comm/ucx/tag.h"
#include "comm/ucx/ucx_api.h"

namespace xffl::comm::ucx {

constexpr uint64_t kRevokeTag = message_tag(kGroupTagLimit - 1, 0xffu, kNoticeSender - 1, 0xffu, 0xff);
constexpr uint64_t kRevokeTagMask = ~uint64_t{0};  // exact: a probe is one hash lookup

// Fixed size, no pointers: what is sent is what is received, on one machine architecture.
struct RevokeNotice {
  static constexpr uint32_t kMagic = 0x78725631;  // "xrV1"
  uint32_t magic = kMagic;
  int32_t failed_rank = -1;
  int32_t notifier = -1;  // the rank that sent this copy
  int32_t detector = -1;  // the rank that saw the failure first
  char why[240] = {};     // the detector's words, NUL-terminated (cut when longer)

  void set_why(const std::string &text);
  std::string why_text() const;
};

// Starts sending the notice to one peer, behind what is queued to it already (an endpoint with
// sends in flight cannot complete one at once). Returns what ucp_tag_send_nbx returns: nullptr
// (sent), a request (the notice must outlive it), or an error status.
ucs_status_ptr_t send_revoke_notice(ucp_ep_h endpoint, const RevokeNotice &notice);

// One revoke notice that has arrived, taken off the unexpected queue; nullopt when none is there.
// Malformed messages under the tag are received and dropped.
std::optional<RevokeNotice> take_revoke_notice(ucp_worker_h worker);

}  // namespace xffl::comm::ucx

#endif
