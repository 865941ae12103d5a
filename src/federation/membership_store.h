// The federation's membership store: leases, revisions, compare-and-swap, prefix listing and a bounded
// wait for changes (DESIGN.md section 7). Two implementations are driven through this one interface
// and pass the same tests: etcd v3 (etcd_store.h, real deployments, one member per facility) and the
// built-in server tools/xffl-federation (xffl_store.h, one machine and tests).
//
// Semantics are etcd's, so that both behave alike:
// - every write gets the store's next revision; a key's mod_revision is the revision of its last write;
// - a key put with a lease disappears when the lease ends: revoked, or not kept alive for its TTL;
// - compare_and_swap writes only if the key's mod_revision is the one expected (0: the key is absent),
//   atomically; exactly one of several racing writers with the same expectation succeeds.
//
// Every call is bounded by the timeout given to connect_membership_store (or a shorter one,
// set_call_timeout) and throws xffl::Error naming
// the endpoint and what was awaited: XFFL_ETIMEOUT (no answer in time), XFFL_ENETWORK (no member
// reachable, or something that is not the store answered), XFFL_EAUTH (the job secret was refused),
// XFFL_EPEER (the store answered with an error of its own), XFFL_EINVAL (a key or value beyond the
// limits below, a TTL outside [1, kMaxLeaseTtlSeconds]).
//
// Not thread-safe: one call at a time per object (the keep-alive thread of a later session gets its
// own connection).
#ifndef XFFL_SRC_FEDERATION_MEMBERSHIP_STORE_H
#define XFFL_SRC_FEDERATION_MEMBERSHIP_STORE_H

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "federation/endpoint.h"

namespace xffl::federation {

constexpr size_t kMaxKey = 1024;
constexpr size_t kMaxValue = size_t{1} << 20;
constexpr int64_t kMaxLeaseTtlSeconds = 24 * 3600;

using LeaseId = int64_t;  // 0: no lease

struct KeyValue {
  std::string key;
  std::string value;
  int64_t create_revision = 0;
  int64_t mod_revision = 0;
  LeaseId lease = 0;
};

// A prefix's keys in key order, read at the store's `revision`.
struct Listing {
  int64_t revision = 0;
  std::vector<KeyValue> entries;
};

struct CasResult {
  bool succeeded = false;
  int64_t revision = 0;             // the store's revision after the call (the new mod_revision on success)
  std::optional<KeyValue> current;  // on failure: the key as it is now (nullopt: absent)
};

class MembershipStore {
 public:
  virtual ~MembershipStore() = default;

  // The endpoint's text, for messages.
  virtual const std::string &endpoint() const = 0;

  // A lease that ends ttl_seconds after its last keep_alive, unless revoked first.
  virtual LeaseId grant_lease(int64_t ttl_seconds) = 0;
  // Renews the lease; returns its TTL in seconds, or 0 when the lease has already ended (expired or
  // revoked: its keys are gone and it cannot come back).
  virtual int64_t keep_alive(LeaseId lease) = 0;
  // Ends the lease now and deletes its keys. Revoking an ended lease is not an error.
  virtual void revoke(LeaseId lease) = 0;

  // Writes key = value (attached to `lease` unless 0); returns the new revision.
  virtual int64_t put(const std::string &key, const std::string &value, LeaseId lease = 0) = 0;
  virtual std::optional<KeyValue> get(const std::string &key) = 0;
  // Writes only if key's mod_revision == expected_mod_revision (0: only if the key is absent).
  virtual CasResult compare_and_swap(const std::string &key, int64_t expected_mod_revision, const std::string &value,
                                     LeaseId lease = 0) = 0;
  // A compare_and_swap whose answer the caller does not need (its outcome is decided either way, as a
  // round's commit once every ack is in): it may return before the store applied it, and reports no
  // failure. The store applies it before any later request of this connection (xffl: it is sent now and
  // its answer read before the next call's; etcd: done now, as compare_and_swap).
  virtual void compare_and_swap_unanswered(const std::string &key, int64_t expected_mod_revision,
                                           const std::string &value) = 0;
  // A put (no lease) whose answer the caller does not wait for, as compare_and_swap_unanswered: a
  // round's ack, which the listing that follows on this connection shows once applied, and which the
  // caller puts again, answered, when that listing does not (epochs.h). Reports no failure but an
  // invalid key or value.
  virtual void put_unanswered(const std::string &key, const std::string &value) = 0;
  // Every key that starts with prefix (an empty prefix lists everything).
  virtual Listing list(const std::string &prefix) = 0;
  // Waits at most timeout_ms until the prefix's keys differ from `since` (a listing of the same
  // prefix): a key written, added or deleted (a lease's end included). Returns the new listing, or
  // nullopt when nothing changed in time. timeout_ms is capped at the connection's timeout.
  virtual std::optional<Listing> wait_for_change(const std::string &prefix, const Listing &since, int timeout_ms) = 0;

  // Bounds each later call at timeout_ms instead of the connection's timeout (at most that; 0 or less:
  // the connection's timeout again), so that a caller with a deadline of its own is never held past
  // it by one request: a wait_for_change then ends within its wait plus this bound.
  virtual void set_call_timeout(int timeout_ms) = 0;
};

// Connects to the endpoint and authenticates with the job secret (empty: no authentication); the
// timeout bounds the connection and every later call. Throws as the calls do.
std::unique_ptr<MembershipStore> connect_membership_store(const Endpoint &endpoint, const std::string &secret,
                                                          int timeout_ms);

// Checks a key and a value against the limits above; XFFL_EINVAL naming the endpoint otherwise.
void check_key(const std::string &endpoint, const std::string &key);
void check_value(const std::string &endpoint, const std::string &key, const std::string &value);
void check_ttl(const std::string &endpoint, int64_t ttl_seconds);

}  // namespace xffl::federation

#endif
