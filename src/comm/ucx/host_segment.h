// The shared-memory segment of a group whose members all run on one host: the small collectives'
// flag-and-slot path (host_collectives.h). One page of flags per member, then two slots per member
// (one per parity of the call's sequence number) that hold what the member contributes to a call.
//
// A call's contribution of at most kInlineBytes (a scalar: a loss, a norm, a count) travels inline,
// beside the member's "arrived" word and signature on one cache line, so that a reader gets the flag,
// the signature and the data with one line from the writer's core; larger ones go in the slot.
//
// Flags, per member, each a 32-bit word that only its member writes:
//   arrived  sequence + 1 of the last call whose slot and signature the member published;
//   done     sequence + 1 of the last call whose slots the member has finished reading;
//   staged   round + 1 of the last round of a pipelined call (host_collectives.h) whose operands the
//            member has copied into its slot;
//   reduced  round + 1 of the last such round whose reduced part the member has put in its slot.
// Rounds are numbered by the members themselves, on from one pipelined call to the next.
// A member publishes (release), readers wait for it (acquire): spinning for a bounded time, then
// sleeping on the word with FUTEX_WAIT (shared, not private: the words are in a mapping shared
// between processes) with a short timeout, so that the caller can look for timeouts, dead peers and
// notices between sleeps. A writer wakes the word only when someone sleeps on it (a count of
// sleepers per word, sequentially consistent with the word: a sleeper either sees the new value or
// is counted when the writer looks).
//
// How it is shared: the first member makes it with memfd_create, the others open the creator's
// descriptor through /proc/<pid>/fd/<n> (host_collectives.h sends them the pid and number) and map
// it; then the creator closes its descriptor. A memfd has no name, so nothing is left in /dev/shm
// by any exit, a crash included: the memory goes when the last mapping goes. (A named POSIX segment
// unlinked at once would leave its name behind when the creator dies between shm_open and
// shm_unlink; pidfd_getfd needs ptrace-attach rights where opening /proc/<pid>/fd needs read rights.)
#ifndef XFFL_SRC_COMM_UCX_HOST_SEGMENT_H
#define XFFL_SRC_COMM_UCX_HOST_SEGMENT_H

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "comm/ucx/call_check.h"

namespace xffl::comm::ucx {

class HostSegment {
 public:
  // The words above, for the waits.
  enum class Flag { arrived, done, staged, reduced };

  // A new segment for `members` members with slots of slot_bytes, whose flags say that every member
  // has arrived at and read the call before first_sequence; nullptr with *why set when the kernel
  // refuses. Its descriptor stays open (descriptor()) until close_descriptor().
  static std::unique_ptr<HostSegment> create(int members, int me, size_t slot_bytes, uint32_t first_sequence,
                                             std::string *why);
  // The creator's segment, through /proc/<pid>/fd/<descriptor>; nullptr with *why set when it
  // cannot be opened or is not the segment described.
  static std::unique_ptr<HostSegment> open(long pid, int descriptor, int members, int me, size_t slot_bytes,
                                           std::string *why);
  ~HostSegment();
  HostSegment(const HostSegment &) = delete;
  HostSegment &operator=(const HostSegment &) = delete;

  int descriptor() const { return descriptor_; }
  void close_descriptor();
  int members() const { return members_; }
  size_t slot_bytes() const { return slot_bytes_; }

  // Contributions of at most this many bytes travel inline (contribution()).
  static constexpr size_t kInlineBytes = 8;

  // The slot of `member` for the call with this sequence number.
  unsigned char *slot(int member, uint32_t sequence) const;
  // Where member's contribution of `bytes` to the call lies (every member asks with the same bytes):
  // inline beside its flag up to kInlineBytes, else its slot.
  unsigned char *contribution(int member, uint32_t sequence, size_t bytes) const;
  // Publishes this member's signature and slot for the call: arrived = sequence + 1.
  void publish(uint32_t sequence, const CallSignature &signature);
  // This member has read every slot it needed for the call: done = sequence + 1.
  void finish_reading(uint32_t sequence);
  // The pipelined calls' rounds: staged = round + 1, reduced = round + 1 (flag staged or reduced).
  void publish_round(Flag flag, uint32_t round);
  // Whether member published the call (or a later one).
  bool arrived(int member, uint32_t sequence) const;
  // Whether member published exactly this call (and no later one yet).
  bool arrived_at(int member, uint32_t sequence) const;
  // The signature member published for the call; valid once arrived(member, sequence).
  CallSignature signature(int member, uint32_t sequence) const;

  // Whether member's `flag` has reached `value` (a sequence or a round).
  bool reached(int member, Flag flag, uint32_t value) const;

  // Waiting until reached(member, flag, value). spin: until spin_end (the
  // caller's budget for the whole call, algorithm_choice::host_segment_spin_ns); sleep: on the
  // member's word (futex) for a short slice at most (kSleepSliceNs in the .cpp), so that the caller
  // looks for timeouts, dead peers and notices between sleeps. Each says whether the member got there.
  bool spin(int member, Flag flag, uint32_t value, std::chrono::steady_clock::time_point spin_end) const;
  bool sleep(int member, Flag flag, uint32_t value) const;
  // Between spin and sleep: gives the core away a few times (sched_yield,
  // algorithm_choice::host_segment_yields), so that a peer waiting for this core runs without the
  // cost of a futex sleep and wake-up on both sides. A yield that finds no other task for this core
  // does not count when this member has just woken a sleeper: the call keeps watching the flag,
  // yielding now and then, for a bounded time (algorithm_choice::host_segment_idle_spin_ns), since
  // sleeping would only idle the core while the member it woke is on its way.
  bool yield(int member, Flag flag, uint32_t value) const;

 private:
  struct Flags;
  struct Layout;
  HostSegment(int members, int me, size_t slot_bytes, unsigned char *base, size_t bytes, int descriptor);
  static size_t flags_bytes(int members);
  static size_t total_bytes(int members, size_t slot_bytes);
  Flags &flags(int member) const;
  // A flag of member's: its word and the count of members asleep on it (futex).
  struct Word {
    std::atomic<uint32_t> &value;
    std::atomic<uint32_t> &sleepers;
  };
  Word word(int member, Flag flag) const;

  int members_;
  int me_;
  size_t slot_bytes_;
  unsigned char *base_;
  size_t bytes_;
  int descriptor_;
  // When this member last woke a member asleep on one of its flags (yield).
  std::chrono::steady_clock::time_point last_wake_{};
};

}  // namespace xffl::comm::ucx

#endif
