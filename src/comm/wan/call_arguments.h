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

#include "xffl/types.h"

namespace xffl::comm::wan {

enum class CallKind : int32_t { Barrier = 1, Allreduce, Broadcast, Allgather, ReduceScatter };

// A collective call's arguments as every member must give them: root a global rank (-1: none), op -1
// for the calls without one, count the call's count argument.
struct CallArguments {
  CallKind kind = CallKind::Barrier;
  int32_t dtype = -1;
  int32_t op = -1;
  int32_t root = -1;
  uint64_t count = 0;

  static CallArguments of(CallKind kind, uint64_t count, xffl_dtype_t dtype, int op = -1, int root = -1) {
    return {kind, static_cast<int32_t>(dtype), static_cast<int32_t>(op), static_cast<int32_t>(root), count};
  }
};
bool operator==(const CallArguments &a, const CallArguments &b);
inline bool operator!=(const CallArguments &a, const CallArguments &b) { return !(a == b); }

// 8 bits of a call's arguments, carried by each of its frames (framing.h): a frame of the current call
// whose check differs from this member's is a mismatch even where the sizes agree (1 in 256 collide).
uint8_t call_check(const CallArguments &call);

// "allreduce of count 1000 f32, op sum".
std::string describe_call(const CallArguments &call);
// "rank 1 called with count 1200, rank 0 with count 1000": the first argument that differs.
std::string describe_difference(int their_rank, const CallArguments &theirs, int my_rank, const CallArguments &mine);

// A member that found a mismatch sends it to every member it is connected to, then waits briefly for
// the other side's (which names the arguments it could only guess from a message's size).
struct MismatchNotice {
  int32_t notifier = -1;      // global rank of the sender
  int32_t culprit = -1;       // global rank whose call differs from the notifier's
  bool culprit_known = false; // whether `theirs` holds the culprit's arguments
  CallArguments mine;         // the notifier's
  CallArguments theirs;       // the culprit's, when known
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
