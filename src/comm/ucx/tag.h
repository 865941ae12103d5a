// The 64-bit UCX tag of every message: which group, which collective, who sent it, which step.
//
//   63 ........ 44 | 43 ........ 24 | 23 ..... 8 | 7 .. 0
//   group (20 bits)  sender (20 bits)  sequence    step
//
// group: the GroupSpec tag, below 2^20 and unique among the live groups that share a member
// (communicator.h), so receives of two such groups can never match each other's messages.
// sequence: the collective's number within its communicator (mod 2^16); messages of successive
// collectives never mix. sender: the sender's index in the group, so a receive names its source.
// step: the step of the schedule (mod 256). Receives match the whole tag exactly.
#ifndef XFFL_SRC_COMM_UCX_TAG_H
#define XFFL_SRC_COMM_UCX_TAG_H

#include <cstdint>

namespace xffl::comm::ucx {

constexpr int kGroupBits = 20;
constexpr int kSenderBits = 20;
constexpr uint64_t kMaxGroupSize = uint64_t{1} << kSenderBits;

constexpr uint64_t kGroupTagLimit = uint64_t{1} << kGroupBits;

inline uint64_t message_tag(uint64_t group_bits, uint32_t sequence, int sender_index, int step) {
  return group_bits << 44 | (static_cast<uint64_t>(sender_index) & 0xfffffu) << 24 |
         (static_cast<uint64_t>(sequence) & 0xffffu) << 8 | (static_cast<uint64_t>(step) & 0xffu);
}

constexpr uint64_t kExactTagMask = ~uint64_t{0};

}  // namespace xffl::comm::ucx

#endif
