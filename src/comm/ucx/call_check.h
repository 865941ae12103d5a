// Members that call one collective with different arguments (count, dtype, op, root, or another
// collective altogether) get XFFL_EINVAL on every member instead of a hang or a garbled result.
//
// How it costs nothing on the hot path: every message's tag carries an 8-bit hash of its call's
// arguments (tag.h), and receives match with that field masked out. A completed receive compares the
// hash with its own call's and its length with the one expected; a truncated receive is a mismatch
// too. A member that finds one sends a notice (its own arguments, and what it knows of the other
// member's) to every member, then waits briefly for a notice that names the other values. A member
// waiting in a collective looks for notices of its call, and for stray messages of its call with
// another hash (a member that took another root sends where nobody receives), every 20 ms; a
// notice with other arguments than its own ends its call with XFFL_EINVAL naming both. A member
// whose part completed before a notice came (the root of a broadcast, say) finds it at the start of
// its next collective on the group: that call returns XFFL_EINVAL naming the earlier mismatch.
//
// The root of a broadcast that will not send (its crossing hop failed: Communicator::abort_broadcast)
// sends an aborted notice of the call instead, with its status and words: the members end their call
// with them at their next look for notices.
//
// Limits: two calls whose hashes collide (1 in 256) and whose messages have equal lengths are not
// told apart; a zero count sends nothing, so zero against non-zero times out instead.
#ifndef XFFL_SRC_COMM_UCX_CALL_CHECK_H
#define XFFL_SRC_COMM_UCX_CALL_CHECK_H

#include <ucp/api/ucp.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "comm/call_signature.h"
#include "xffl/types.h"

namespace xffl::comm::ucx {

// CallKind, CallSignature, signature_bits (the tag's 8-bit field, tag.h), describe_call and
// describe_difference: comm/call_signature.h.

// What a member that found a mismatch tells every member. Sent as bytes between processes of one
// build, so its layout needs no encoding.
struct MismatchNotice {
  uint32_t magic = kMagic;
  int32_t notifier = -1;     // global rank of the sender
  int32_t culprit = -1;      // global rank whose call differs from the notifier's
  int32_t culprit_known = 0; // whether `theirs` holds the culprit's arguments
  uint32_t sequence = 0;     // the call's sequence number (mod 256, tag.h)
  CallSignature mine;        // the notifier's arguments
  CallSignature theirs;      // the culprit's, when known
  // Set by the root of a broadcast that will not send (Communicator::abort_broadcast): the members
  // of the call fail with its status and words instead of waiting for data that cannot come.
  int32_t aborted = 0;
  int32_t status = 0;
  char why[384] = {};        // NUL-terminated, cut when longer

  static constexpr uint32_t kMagic = 0x78666d31;  // "xfm1"
};

// A member's arguments that differ from `mine`, learnt from a notice: the notifier's own, or the
// culprit's when the notifier knew them.
struct Disagreement {
  int rank = -1;
  CallSignature signature;
};
std::optional<Disagreement> disagreement(const MismatchNotice &notice, const CallSignature &mine);

// Removes the oldest unexpected message matching (tag, mask) that is a notice and returns it; nullopt
// when there is none. Messages of another size are removed and ignored.
std::optional<MismatchNotice> take_notice(ucp_worker_h worker, uint64_t tag, uint64_t mask);

// How a notice send ended (send_notice_waiting).
enum class NoticeSend { sent, failed, in_flight };
// Sends a notice (too large for UCX's immediate sends on shared memory, with its words): the send may
// take a request, which is progressed until deadline. in_flight: it had not completed by then, and
// UCX still holds a reference to `notice`, which must stay alive (the caller leaks it).
NoticeSend send_notice_waiting(ucp_worker_h worker, ucp_ep_h endpoint, const MismatchNotice &notice, uint64_t tag,
                               std::chrono::steady_clock::time_point deadline);

}  // namespace xffl::comm::ucx

#endif
