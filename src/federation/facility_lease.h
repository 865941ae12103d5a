// A facility's liveness in the federation (DESIGN.md section 7): one holder per facility job (its rank
// 0) grants a lease of XFFL_FEDERATION_LEASE_TTL seconds, puts the facility's member key with it and
// renews it from its own thread over its own store connection. The key's value is a fresh incarnation
// id, so that a restarted facility is told apart from the job it replaces.
//
// Eviction: when a renewal finds the lease ended (the process was stopped, or the store unreachable,
// for longer than the TTL), the facility is no longer a member; evicted() says so and it must not go
// on as one: rejoin() registers it again under a new lease and incarnation, and the round coordinator
// (epochs.h) admits it at a round boundary as a returning facility.
//
// Bounds: the lease's connection has a timeout of min(timeout_ms, max(1 s, TTL)), so every renewal and
// the destructor (which stops the thread, then revokes the lease) end within about one TTL.
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
  // The current incarnation (the member key's value); changes with rejoin(). Thread-safe.
  std::string incarnation() const;
  // True once a renewal found the lease ended, or no renewal succeeded for a whole TTL. Thread-safe.
  bool evicted() const { return evicted_.load(); }
  // Why evicted() is true ("" while it is not): names the facility, the lease and what was found.
  std::string eviction_cause() const;
  // Registers the facility again: a new lease and a new incarnation (the old lease is revoked first, in
  // case it still lives). Call it from the thread that owns this object. Throws as the constructor.
  void rejoin();
  // Revokes the lease now (a clean shutdown); the destructor then has nothing left to do. Throws as the
  // store does.
  void revoke();

 private:
  void register_member();
  void start();
  void stop();
  void renew_loop();
  void mark_evicted(const std::string &cause);

  std::unique_ptr<MembershipStore> store_;  // used by the renewing thread while it runs, else by the owner
  std::string prefix_;
  int facility_ = 0;
  int64_t ttl_seconds_ = 0;
  LeaseId lease_ = 0;
  std::atomic<bool> evicted_{false};
  mutable std::mutex mutex_;  // guards incarnation_, cause_, stopping_
  std::condition_variable wake_;
  std::string incarnation_;
  std::string cause_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace xffl::federation

#endif
