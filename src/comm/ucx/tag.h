// The 64-bit UCX tag of every message: which group, who sent it, which collective, with which
// arguments, which step.
//
//   63 ........ 44 | 43 ........ 24 | 23 .. 16 | 15 ..... 8 | 7 .. 0
//   group (20 bits)  sender (20 bits)  sequence   signature    step
//
// group: the GroupSpec tag, below 2^20 and unique among the live groups that share a member
// (communicator.h), so receives of two such groups can never match each other's messages.
// sender: the sender's index in the group, so a receive names its source; the last value
// (kNoticeSender) marks a mismatch notice (call_check.h), the one before it the revoke notice
// (revocation.h); neither is ever a member.
// sequence: the collective's number within its communicator (mod 256). Messages of one sender are
// matched in the order sent, and every member posts its receives in the order of its collectives,
// so the number only keeps apart calls that members make differently.
// signature: an 8-bit hash of the call's arguments (call_check.h). Receives match every field but
// this one (kReceiveMask) and compare it on completion: members that disagree get XFFL_EINVAL.
// step: the step of the schedule (mod 256).
// One tag is reserved: the revoke notice's (revocation.h), which no group's message can carry.
#ifndef XFFL_SRC_COMM_UCX_TAG_H
#define XFFL_SRC_COMM_UCX_TAG_H

#include <cstdint>

namespace xffl::comm::ucx {

constexpr int kGroupBits = 20;
constexpr int kSenderBits = 20;
constexpr uint64_t kNoticeSender = (uint64_t{1} << kSenderBits) - 1;
// kNoticeSender - 1 is the revoke notice's sender (revocation.h): member indices 0 .. kNoticeSender - 2.
constexpr uint64_t kMaxGroupSize = kNoticeSender - 1;

constexpr uint64_t kGroupTagLimit = uint64_t{1} << kGroupBits;

constexpr uint64_t message_tag(uint64_t group_bits, uint32_t sequence, uint64_t sender_index, uint8_t signature,
                            int step) {
  return group_bits << 44 | (sender_index & 0xfffffu) << 24 | (static_cast<uint64_t>(sequence) & 0xffu) << 16 |
         static_cast<uint64_t>(signature) << 8 | (static_cast<uint64_t>(step) & 0xffu);
}

constexpr uint64_t kGroupMask = uint64_t{0xfffff} << 44;
constexpr uint64_t kSenderMask = uint64_t{0xfffff} << 24;
constexpr uint64_t kSequenceMask = uint64_t{0xff} << 16;
constexpr uint64_t kSignatureMask = uint64_t{0xff} << 8;
// Data receives: everything but the signature, which the receiver compares itself.
constexpr uint64_t kReceiveMask = ~kSignatureMask;
// Every message of one call (any sender, signature, step), and the notices of one call or of any.
constexpr uint64_t kCallMask = kGroupMask | kSequenceMask;
constexpr uint64_t kCallNoticeMask = kGroupMask | kSenderMask | kSequenceMask;
constexpr uint64_t kGroupNoticeMask = kGroupMask | kSenderMask;

inline uint64_t notice_tag(uint64_t group_bits, uint32_t sequence) {
  return message_tag(group_bits, sequence, kNoticeSender, 0, 0);
}
inline uint64_t sender_of(uint64_t tag) { return (tag & kSenderMask) >> 24; }
inline uint32_t sequence_of(uint64_t tag) { return static_cast<uint32_t>((tag & kSequenceMask) >> 16); }
inline uint8_t signature_of(uint64_t tag) { return static_cast<uint8_t>((tag & kSignatureMask) >> 8); }

}  // namespace xffl::comm::ucx

#endif
