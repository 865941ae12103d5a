// The built-in federation server's state, without sockets: keys with revisions, leases that end
// after their TTL without keep-alive, and the recent changes that a Watch waits for. Time is passed
// in, so tests and fuzzers drive expiry without sleeping.
//
// Semantics follow etcd v3 (membership_store.h): one store-wide revision, incremented by every put
// and by every deletion batch (a lease's end deletes its keys at one new revision); a key's
// create_revision and mod_revision; a put with an unknown lease fails (as etcd's "requested lease not
// found"); compare_and_swap with expected 0 succeeds only for an absent key.
#ifndef XFFL_SRC_FEDERATION_FEDERATION_CORE_H
#define XFFL_SRC_FEDERATION_FEDERATION_CORE_H

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "federation/membership_store.h"

namespace xffl::federation {

class FederationCore {
 public:
  using Clock = std::chrono::steady_clock;

  // The most leases and keys the server holds; beyond them grants and new keys fail (XFFL_EPEER), so a
  // misbehaving client cannot exhaust the server's memory.
  static constexpr size_t kMaxLeases = 65536;
  static constexpr size_t kMaxKeys = 65536;
  // Changes remembered for Watch; a watcher further behind is told "changed" at once.
  static constexpr size_t kHistory = 65536;

  // Every call first ends the leases whose deadline is <= now.
  LeaseId grant(int64_t ttl_seconds, Clock::time_point now);
  int64_t keep_alive(LeaseId lease, Clock::time_point now);  // TTL, or 0 when the lease has ended
  int64_t revoke(LeaseId lease, Clock::time_point now);      // the revision after it
  int64_t put(const std::string &key, const std::string &value, LeaseId lease, Clock::time_point now);
  std::optional<KeyValue> get(const std::string &key, Clock::time_point now);
  CasResult compare_and_swap(const std::string &key, int64_t expected_mod_revision, const std::string &value,
                             LeaseId lease, Clock::time_point now);
  Listing list(const std::string &prefix, Clock::time_point now);
  // Whether a key under prefix was written or deleted at a revision after `since`.
  bool changed_since(const std::string &prefix, int64_t since, Clock::time_point now);

  // The earliest lease deadline, for a waiter that must wake when a lease ends.
  std::optional<Clock::time_point> next_expiry() const;
  int64_t revision() const { return revision_; }
  size_t lease_count() const { return leases_.size(); }

 private:
  struct Lease {
    int64_t ttl_seconds = 0;
    Clock::time_point deadline;
    std::set<std::string> keys;
  };
  void expire(Clock::time_point now);
  void erase_lease(std::map<LeaseId, Lease>::iterator lease);  // deletes its keys at the current revision
  void write(const std::string &key, const std::string &value, LeaseId lease);  // at the current revision
  void remember(const std::string &key);

  int64_t revision_ = 1;  // etcd starts at 1 too: revision 0 means "never written"
  LeaseId next_lease_ = 1;
  std::map<std::string, KeyValue> keys_;
  std::map<LeaseId, Lease> leases_;
  std::deque<std::pair<int64_t, std::string>> history_;  // (revision, key), oldest first
  int64_t forgotten_ = 0;  // the newest revision dropped from history_
};

}  // namespace xffl::federation

#endif
