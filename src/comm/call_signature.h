// A collective call's arguments as every member of a group must give them, and the words that name a
// disagreement. Both transports that find members calling with different arguments use it: UCX's
// (comm/ucx/call_check.h) and the wan backend's (comm/wan/call_arguments.h); each carries signature_bits
// in its messages and sends its own notice.
#ifndef XFFL_SRC_COMM_CALL_SIGNATURE_H
#define XFFL_SRC_COMM_CALL_SIGNATURE_H

#include <cstdint>
#include <string>

#include "xffl/types.h"

namespace xffl::comm {

enum class CallKind : int32_t { Barrier = 1, Allreduce, Broadcast, Allgather, ReduceScatter };

// root is a global rank (-1: none), op -1 for the calls without one; count is the call's count argument.
// Plain data: notices carry it as its bytes between processes of one build.
struct CallSignature {
  CallKind kind = CallKind::Barrier;
  int32_t dtype = -1;
  int32_t op = -1;
  int32_t root = -1;
  uint64_t count = 0;

  static CallSignature barrier() { return {}; }
  static CallSignature of(CallKind kind, uint64_t count, xffl_dtype_t dtype, int op = -1, int root = -1) {
    return {kind, static_cast<int32_t>(dtype), static_cast<int32_t>(op), static_cast<int32_t>(root), count};
  }
};
bool operator==(const CallSignature &a, const CallSignature &b);
inline bool operator!=(const CallSignature &a, const CallSignature &b) { return !(a == b); }

// 8 bits of a call's arguments, carried by each of its messages: a message of the current call whose
// bits differ from this member's is a mismatch even where the sizes agree (1 in 256 collide).
uint8_t signature_bits(const CallSignature &signature);

// "allreduce of count 99 f32, op sum": one call, for messages that know only one side.
std::string describe_call(const CallSignature &signature);
// "rank 2 called with count 100, rank 0 with count 99": the first argument that differs.
std::string describe_difference(int their_rank, const CallSignature &theirs, int my_rank, const CallSignature &mine);

}  // namespace xffl::comm

#endif
