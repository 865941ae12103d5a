#include "bootstrap/group_registry.h"

#include "common/error.h"

namespace xffl::bootstrap {

GroupRegistry::GroupRegistry(uint32_t slots) : slots_(slots) {
  if (slots == 0) fail(XFFL_EINTERNAL, "a group registry needs at least one slot");
}

std::string GroupRegistry::key(const std::vector<int> &sorted_members, uint32_t creation) {
  // Runs of consecutive ranks keep the key short for the common contiguous groups; the encoding is
  // exact (two different member lists never give one key).
  std::string key;
  auto put = [&key](uint32_t value) {
    for (int shift = 24; shift >= 0; shift -= 8) key.push_back(static_cast<char>((value >> shift) & 0xffu));
  };
  put(creation);
  size_t i = 0;
  while (i < sorted_members.size()) {
    size_t end = i + 1;
    while (end < sorted_members.size() && sorted_members[end] == sorted_members[end - 1] + 1) ++end;
    put(static_cast<uint32_t>(sorted_members[i]));
    put(static_cast<uint32_t>(end - i));
    i = end;
  }
  return key;
}

std::optional<GroupClaim> GroupRegistry::claim(const std::string &key, uint32_t members) {
  if (members == 0) return std::nullopt;
  if (auto found = pending_.find(key); found != pending_.end()) {
    Pending &pending = found->second;
    if (pending.members != members) return std::nullopt;
    const GroupClaim claim = pending.claim;
    if (++pending.claimed == pending.members) {
      pending_bytes_ -= key.size();
      pending_.erase(found);
    }
    return claim;
  }
  GroupClaim claim;
  if (!free_.empty()) {
    claim.slot = free_.front();
    free_.pop_front();
  } else if (next_fresh_ < slots_) {
    claim.slot = next_fresh_++;
  } else {
    return std::nullopt;
  }
  claim.serial = next_serial_++;
  live_[claim.slot] = Live{members, 0};
  if (members > 1) {
    pending_.emplace(key, Pending{claim, members, 1});
    pending_bytes_ += key.size();
  }
  return claim;
}

bool GroupRegistry::release(uint32_t slot) {
  auto found = live_.find(slot);
  if (found == live_.end()) return false;
  if (++found->second.released < found->second.members) return true;
  live_.erase(found);
  free_.push_back(slot);
  return true;
}

}  // namespace xffl::bootstrap
