#include "federation/facility_lease.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>

#include "common/error.h"

namespace xffl::federation {

namespace {

using Clock = std::chrono::steady_clock;

// 16 hex digits from the OS's entropy: two jobs of one facility never share one.
std::string fresh_incarnation() {
  std::random_device device;
  uint64_t value = (uint64_t{device()} << 32) ^ device();
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
  return text;
}

}  // namespace

std::string federation_prefix(const std::string &job_id) { return "xffl/" + job_id + "/"; }

std::string member_key(const std::string &prefix, int facility) {
  char digits[16];
  std::snprintf(digits, sizeof digits, "%06d", facility);
  return prefix + "live/member/" + digits;
}

FacilityLease::FacilityLease(const Endpoint &endpoint, const std::string &secret, int timeout_ms,
                             const std::string &prefix, int facility, int64_t ttl_seconds)
    : prefix_(prefix), facility_(facility), ttl_seconds_(ttl_seconds) {
  if (facility < 0) fail(XFFL_EINVAL, "federation ", endpoint.text, ": facility ", facility, " must be >= 0");
  check_ttl(endpoint.text, ttl_seconds);
  if (timeout_ms <= 0) fail(XFFL_EINVAL, "federation ", endpoint.text, ": timeout ", timeout_ms, " ms must be positive");
  // The first registration may take the whole timeout (a store electing a leader, a loaded machine);
  // then a renewal must not outlast the lease it renews, and the destructor must not wait a whole
  // timeout: the same connection goes on with every call bounded by the TTL. (A second connection,
  // made within that bound, failed on a loaded machine: etcd checks the password with bcrypt, and
  // its answer took longer than the 2 s of a TTL of 2 s. The facility had registered, and its lease
  // holder died.)
  auto first = connect_membership_store(endpoint, secret, timeout_ms);
  register_member(*first);
  // etcd keeps a lease at least 1.5 election timeouts, whatever was asked: read back what it granted. A
  // lease that outlives the timeout would make the other facilities time out before this one's loss
  // shows, so continuing after a lost facility would never happen. Whatever fails from here revokes the
  // lease just taken.
  const int64_t bound_ms = std::min<int64_t>(timeout_ms, std::max<int64_t>(1000, ttl_seconds * 1000));
  try {
    const int64_t granted = first->keep_alive(lease_.load());
    if (granted > ttl_seconds && granted * 1000 >= int64_t{timeout_ms})
      fail(XFFL_EINVAL, "federation ", endpoint.text, ": facility ", facility, "'s lease was granted for ", granted,
           " s though ", ttl_seconds, " s were asked (etcd keeps a lease at least 1.5 election timeouts), not "
           "below the timeout of ", timeout_ms, " ms: the other facilities would time out before this facility's "
           "loss showed. Give the etcd members a shorter --election-timeout, or XFFL_TIMEOUT above ", granted, " s");
  } catch (const std::exception &) {
    first->revoke(lease_.load());
    throw;
  }
  store_ = std::move(first);
  store_->set_call_timeout(static_cast<int>(bound_ms));
  start();
}

FacilityLease::~FacilityLease() {
  stop();
  // The store did not answer the last renewal: a revoke would wait for it once more (up to a TTL) at
  // the end of a job cut off from it, and the lease ends by itself within its TTL anyway.
  if (store_silent_.load()) return;
  try {
    if (lease_.load() != 0) store_->revoke(lease_.load());
  } catch (const std::exception &) {
    // The store is unreachable: the lease ends by itself within its TTL.
  }
}

std::string FacilityLease::incarnation() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return incarnation_;
}

std::string FacilityLease::eviction_cause() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return cause_;
}

// A new lease and a new incarnation. A lease granted but not attached (the put failed) is revoked,
// best effort, so that no stray lease outlives this.
void FacilityLease::register_member(MembershipStore &store) {
  LeaseId lease = store.grant_lease(ttl_seconds_);
  std::string incarnation = fresh_incarnation();
  try {
    store.put(member_key(prefix_, facility_), incarnation, lease);
  } catch (const std::exception &) {
    try {
      store.revoke(lease);
    } catch (const std::exception &) {
    }
    throw;
  }
  lease_.store(lease);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    incarnation_ = incarnation;
  }
  registered_.store(true);
}

void FacilityLease::revoke() {
  stop();
  if (lease_.load() != 0) store_->revoke(lease_.load());
  lease_.store(0);
  registered_.store(false);
}

void FacilityLease::start() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = false;
  }
  thread_ = std::thread([this] { renew_loop(); });
}

void FacilityLease::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void FacilityLease::record_eviction(const std::string &cause) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    cause_ = cause;
  }
  registered_.store(false);
  evictions_.fetch_add(1);
}

void FacilityLease::renew_loop() {
  const auto period = std::chrono::milliseconds(std::max<int64_t>(100, ttl_seconds_ * 1000 / 3));
  auto last_renewal = Clock::now();
  while (true) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      if (wake_.wait_for(lock, period, [this] { return stopping_; })) return;
    }
    // Evicted: register again as a returning facility (a new incarnation); retried while it fails.
    auto register_again = [&] {
      try {
        register_member(*store_);
        last_renewal = Clock::now();
        store_silent_.store(false);
      } catch (const std::exception &) {
        store_silent_.store(true);
      }
    };
    if (!registered_.load()) {
      register_again();
      continue;
    }
    const LeaseId lease = lease_.load();
    const auto now = Clock::now();
    try {
      const int64_t ttl = store_->keep_alive(lease);
      store_silent_.store(false);
      if (ttl > 0) {
        last_renewal = now;
        continue;
      }
      record_eviction("facility " + std::to_string(facility_) + ": its lease " + std::to_string(lease) +
                   " in the membership store " + store_->endpoint() + " had ended when it was renewed (" +
                   std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(now - last_renewal).count()) +
                   " ms after the last renewal, TTL " + std::to_string(ttl_seconds_) +
                   " s): the facility was evicted and registers again");
      register_again();
    } catch (const std::exception &) {
      store_silent_.store(true);
      // The store did not answer. Only its answer says whether the lease ended: an etcd cluster without
      // a leader answers nobody, and its next leader extends every lease, so a facility that counted
      // itself evicted after a TTL of silence would give up a membership the store still holds (and,
      // re-registered as a returning facility, no longer count as holding the model). If the lease did
      // end there, the first renewal that gets through finds it (TTL 0, above).
    }
  }
}

}  // namespace xffl::federation
