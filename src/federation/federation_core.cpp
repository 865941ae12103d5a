#include "federation/federation_core.h"

#include <limits>

#include "common/error.h"

namespace xffl::federation {

namespace {

bool starts_with(const std::string &text, const std::string &prefix) { return text.compare(0, prefix.size(), prefix) == 0; }

}  // namespace

void FederationCore::remember(const std::string &key) {
  history_.emplace_back(revision_, key);
  if (history_.size() > kHistory) {
    forgotten_ = history_.front().first;
    history_.pop_front();
  }
}

void FederationCore::erase_lease(std::map<LeaseId, Lease>::iterator lease) {
  for (const std::string &key : lease->second.keys) {
    keys_.erase(key);
    remember(key);
  }
  leases_.erase(lease);
}

void FederationCore::expire(Clock::time_point now) {
  bool ended = false;
  for (auto it = leases_.begin(); it != leases_.end();) {
    if (it->second.deadline <= now) {
      // All leases ending in this call delete their keys at one new revision, as one etcd deletion.
      if (!ended && !it->second.keys.empty()) {
        ++revision_;
        ended = true;
      }
      auto next = std::next(it);
      erase_lease(it);
      it = next;
    } else {
      ++it;
    }
  }
}

std::optional<FederationCore::Clock::time_point> FederationCore::next_expiry() const {
  std::optional<Clock::time_point> earliest;
  for (const auto &[id, lease] : leases_)
    if (!earliest || lease.deadline < *earliest) earliest = lease.deadline;
  return earliest;
}

LeaseId FederationCore::grant(int64_t ttl_seconds, Clock::time_point now) {
  expire(now);
  check_ttl("xffl-federation", ttl_seconds);
  if (leases_.size() >= kMaxLeases)
    fail(XFFL_EPEER, "the federation server holds ", kMaxLeases, " leases already, its limit");
  LeaseId id = next_lease_++;
  leases_[id] = Lease{ttl_seconds, now + std::chrono::seconds(ttl_seconds), {}};
  return id;
}

int64_t FederationCore::keep_alive(LeaseId lease, Clock::time_point now) {
  expire(now);
  auto it = leases_.find(lease);
  if (it == leases_.end()) return 0;
  it->second.deadline = now + std::chrono::seconds(it->second.ttl_seconds);
  return it->second.ttl_seconds;
}

int64_t FederationCore::revoke(LeaseId lease, Clock::time_point now) {
  expire(now);
  auto it = leases_.find(lease);
  if (it != leases_.end()) {
    if (!it->second.keys.empty()) ++revision_;
    erase_lease(it);
  }
  return revision_;
}

void FederationCore::write(const std::string &key, const std::string &value, LeaseId lease) {
  auto existing = keys_.find(key);
  KeyValue entry;
  entry.key = key;
  entry.value = value;
  entry.mod_revision = revision_;
  entry.create_revision = existing == keys_.end() ? revision_ : existing->second.create_revision;
  entry.lease = lease;
  if (existing != keys_.end() && existing->second.lease != lease) {
    auto old = leases_.find(existing->second.lease);
    if (old != leases_.end()) old->second.keys.erase(key);
  }
  if (lease != 0) leases_.at(lease).keys.insert(key);
  keys_[key] = std::move(entry);
  remember(key);
}

int64_t FederationCore::put(const std::string &key, const std::string &value, LeaseId lease, Clock::time_point now) {
  expire(now);
  check_key("xffl-federation", key);
  check_value("xffl-federation", key, value);
  if (lease != 0 && leases_.find(lease) == leases_.end())
    fail(XFFL_EPEER, "lease ", lease, " not found (it expired or was revoked) when putting ", key);
  if (keys_.find(key) == keys_.end() && keys_.size() >= kMaxKeys)
    fail(XFFL_EPEER, "the federation server holds ", kMaxKeys, " keys already, its limit");
  ++revision_;
  write(key, value, lease);
  return revision_;
}

std::optional<KeyValue> FederationCore::get(const std::string &key, Clock::time_point now) {
  expire(now);
  auto it = keys_.find(key);
  if (it == keys_.end()) return std::nullopt;
  return it->second;
}

CasResult FederationCore::compare_and_swap(const std::string &key, int64_t expected_mod_revision,
                                           const std::string &value, LeaseId lease, Clock::time_point now) {
  expire(now);
  auto it = keys_.find(key);
  int64_t current = it == keys_.end() ? 0 : it->second.mod_revision;
  CasResult result;
  if (current != expected_mod_revision) {
    result.revision = revision_;
    if (it != keys_.end()) result.current = it->second;
    return result;
  }
  result.revision = put(key, value, lease, now);
  result.succeeded = true;
  return result;
}

Listing FederationCore::list(const std::string &prefix, Clock::time_point now) {
  expire(now);
  Listing listing;
  listing.revision = revision_;
  for (auto it = keys_.lower_bound(prefix); it != keys_.end() && starts_with(it->first, prefix); ++it)
    listing.entries.push_back(it->second);
  return listing;
}

bool FederationCore::changed_since(const std::string &prefix, int64_t since, Clock::time_point now) {
  expire(now);
  if (since < forgotten_) return true;
  for (auto it = history_.rbegin(); it != history_.rend() && it->first > since; ++it)
    if (starts_with(it->second, prefix)) return true;
  return false;
}

}  // namespace xffl::federation
