// What the members of a cross-facility group tell each other when their calls disagree: each call's
// arguments, the notice a member sends when it finds a mismatch (a message of another size than the
// one it expected), and the words of the error. The design of UCX's (comm/ucx/call_check.h), which
// needs UCX; StripedLinks carries the notice as a frame of its own (striped_links.h).
#ifndef XFFL_SRC_COMM_WAN_CALL_ARGUMENTS_H
#define XFFL_SRC_COMM_WAN_CALL_ARGUMENTS_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "comm/call_signature.h"

namespace xffl::comm::wan {

// CallKind, CallSignature, signature_bits (carried by each frame, framing.h), describe_call and
// describe_difference: comm/call_signature.h.

// A member that found a mismatch sends it to every member it is connected to, then waits briefly for
// the other side's (which names the arguments it could only guess from a message's size).
struct MismatchNotice {
  int32_t notifier = -1;      // global rank of the sender
  int32_t culprit = -1;       // global rank whose call differs from the notifier's
  bool culprit_known = false; // whether `theirs` holds the culprit's arguments
  CallSignature mine;         // the notifier's
  CallSignature theirs;       // the culprit's, when known
  uint64_t came = 0;          // the size of the message that differed, and the size expected (0: none)
  uint64_t expected = 0;
  uint32_t call = 0;          // the call's number (mod 2^24), from the frame's key; not encoded
};
constexpr size_t kNoticeBytes = 80;
void encode_notice(const MismatchNotice &notice, uint8_t out[kNoticeBytes]);
// nullopt: not a notice of this format.
std::optional<MismatchNotice> decode_notice(const uint8_t *in, size_t bytes);

}  // namespace xffl::comm::wan

#endif
