// Identities of process groups made by xffl_create_process_group, handed out by one authority per job
// (the store), so that no two live groups that share a member can ever have the same identity: by
// construction, not by probability (issue: a 19-bit hash of the member list let two live groups match
// each other's messages).
//
// A group is named by its canonical key: its sorted member list and the claimant's creation number of
// that list (the n-th group of the same members on a rank is the n-th on every member, since members
// create groups of one member list in the same order). Every member claims the key; the first claim
// takes a slot, and every later claim of the same key gets the same slot. A slot is live until every
// member has released it (or left the job); then it returns to the back of a FIFO of free slots, so a
// slot is reused only after every other free slot has been: at least (slots - live) claims later.
// Messages of a group can outlive it only after a failed collective; the reuse distance keeps such a
// stale message from meeting a new group of the same slot in any real job.
//
// The serial is unique for the whole job and never reused: it keys what a backend publishes for the
// group in the write-once store (NCCL's unique id).
//
// Pure logic, no I/O: the store core and the tests' in-memory exchange both use it.
#ifndef XFFL_SRC_BOOTSTRAP_GROUP_REGISTRY_H
#define XFFL_SRC_BOOTSTRAP_GROUP_REGISTRY_H

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace xffl::bootstrap {

struct GroupClaim {
  uint32_t slot = 0;
  uint64_t serial = 0;
};

class GroupRegistry {
 public:
  // The number of slots every backend's tag space holds for such groups (2^19).
  static constexpr uint32_t kDefaultSlots = uint32_t{1} << 19;

  explicit GroupRegistry(uint32_t slots = kDefaultSlots);

  // The canonical key of the creation-th group (counted from 0) of these members on a rank. members
  // must be sorted, distinct and non-empty.
  static std::string key(const std::vector<int> &sorted_members, uint32_t creation);

  // Claims the group of this key for one of its `members` members. Every claim of one key gets the
  // same claim; the members-th claim retires the key. nullopt when every slot is live (the caller
  // reports it), or when `members` differs from the first claim's (members disagree on the group).
  std::optional<GroupClaim> claim(const std::string &key, uint32_t members);
  // One member is done with the slot (destroyed its group, or left the job). The members-th release
  // frees it. false for a slot that is not live (nothing changes).
  bool release(uint32_t slot);

  uint32_t slots() const { return slots_; }
  size_t live() const { return live_.size(); }
  size_t pending_keys() const { return pending_.size(); }
  // Bytes held for keys that not every member has claimed yet (the store bounds its memory with it).
  size_t pending_bytes() const { return pending_bytes_; }

 private:
  struct Pending {
    GroupClaim claim;
    uint32_t members;
    uint32_t claimed;
  };
  struct Live {
    uint32_t members;
    uint32_t released;
  };

  uint32_t slots_;
  uint32_t next_fresh_ = 0;  // slots never used yet: [next_fresh_, slots_)
  uint64_t next_serial_ = 1;
  std::deque<uint32_t> free_;  // released slots, oldest first
  std::map<std::string, Pending> pending_;
  std::unordered_map<uint32_t, Live> live_;
  size_t pending_bytes_ = 0;
};

}  // namespace xffl::bootstrap

#endif
