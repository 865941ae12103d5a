// A facility's liveness in the federation (DESIGN.md section 7): one holder per facility job (its rank
// 0) grants a lease of XFFL_FEDERATION_LEASE_TTL seconds, puts the facility's member key with it and
// renews it from its own thread over its own store connection. The key's value is a fresh incarnation
// id, so that a restarted facility is told apart from the job it replaces.
//
// Eviction: when a renewal finds the lease ended (the process was stopped, or the store unreachable
// from it, for longer than the TTL), the facility is no longer a member and must not go on as one. The
// thread registers it again at once, under a new lease and a new incarnation (retried every TTL / 3
// while the store cannot be reached), and counts the eviction (evictions(), eviction_cause()). Only the
// store's answer decides: while renewals get no answer the facility stays registered (an etcd cluster
// electing a leader answers no one, and its new leader extends every lease). The new incarnation
// is what keeps the facility from continuing silently: its crossing ranks' round coordinators
// (epochs.h) find their incarnation gone from the view (RoundOutcome::Evicted), and the next
// begin_round waits until a round boundary admits the facility again as a returning one. No rank of the
// facility has to call anything for that (a crossing rank blocked in begin_round could not).
//
// Bounds: the first registration may take the whole timeout; after it the lease's connection has a
// timeout of min(timeout_ms, max(1 s, TTL)), so every renewal and the destructor (which stops the
// thread, then revokes the lease, unless the last renewal got no answer) end within about one TTL.
#ifndef XFFL_SRC_FEDERATION_FACILITY_LEASE_H
#define XFFL_SRC_FEDERATION_FACILITY_LEASE_H

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "federation/endpoint.h"
#include "federation/membership_store.h"

namespace xffl::federation {

// The key layout of one federation under its prefix (federation_prefix): see epochs.h.
std::string federation_prefix(const std::string &job_id);     // "xffl/<job id>/"
std::string member_key(const std::string &prefix, int facility);  // "<prefix>live/member/<facility, 6 digits>"

class FacilityLease {
 public:
  // Connects, grants the lease, puts the member key and starts renewing it every TTL / 3. Throws as
  // the store does (membership_store.h), XFFL_EINVAL for a facility < 0 or a TTL outside the store's range.
  FacilityLease(const Endpoint &endpoint, const std::string &secret, int timeout_ms, const std::string &prefix,
                int facility, int64_t ttl_seconds);
  // Stops the thread and revokes the lease (its member key disappears at once). Never throws.
  ~FacilityLease();
  FacilityLease(const FacilityLease &) = delete;
  FacilityLease &operator=(const FacilityLease &) = delete;

  int facility() const { return facility_; }
  // The current incarnation (the member key's value); changes at each eviction. Thread-safe.
  std::string incarnation() const;
  // How many times a renewal found the lease ended (each time the thread registered the facility
  // again). Thread-safe.
  uint64_t evictions() const { return evictions_.load(); }
  // The last eviction's cause ("" before any): names the facility, the lease and what was found.
  std::string eviction_cause() const;
  // True while the facility is registered (false after an eviction until the new registration is in).
  bool registered() const { return registered_.load(); }
  // Revokes the lease now (a clean shutdown); the destructor then has nothing left to do. Throws as the
  // store does.
  void revoke();

 private:
  void register_member(MembershipStore &store);
  void start();
  void stop();
  void renew_loop();
  void record_eviction(const std::string &cause);

  std::unique_ptr<MembershipStore> store_;  // used by the renewing thread while it runs, else by the owner
  std::string prefix_;
  int facility_ = 0;
  int64_t ttl_seconds_ = 0;
  std::atomic<LeaseId> lease_{0};  // written by the thread after an eviction, read by the owner after stop()
  std::atomic<uint64_t> evictions_{0};
  std::atomic<bool> registered_{false};
  std::atomic<bool> store_silent_{false};  // the last renewal got no answer
  mutable std::mutex mutex_;  // guards incarnation_, cause_, stopping_
  std::condition_variable wake_;
  std::string incarnation_;
  std::string cause_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace xffl::federation

#endif
