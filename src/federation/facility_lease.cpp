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
  // A renewal must not outlast the lease it renews, and the destructor must not wait a whole timeout.
  const int64_t bound_ms = std::min<int64_t>(timeout_ms, std::max<int64_t>(1000, ttl_seconds * 1000));
  store_ = connect_membership_store(endpoint, secret, static_cast<int>(bound_ms));
  register_member();
  start();
}

FacilityLease::~FacilityLease() {
  stop();
  try {
    if (lease_ != 0) store_->revoke(lease_);
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

void FacilityLease::register_member() {
  LeaseId lease = store_->grant_lease(ttl_seconds_);
  std::string incarnation = fresh_incarnation();
  store_->put(member_key(prefix_, facility_), incarnation, lease);
  lease_ = lease;
  std::lock_guard<std::mutex> lock(mutex_);
  incarnation_ = incarnation;
  cause_.clear();
  evicted_.store(false);
}

void FacilityLease::rejoin() {
  stop();
  try {
    if (lease_ != 0) store_->revoke(lease_);
  } catch (const std::exception &) {
    // An unreachable store fails the grant below with its own message.
  }
  lease_ = 0;
  register_member();
  start();
}

void FacilityLease::revoke() {
  stop();
  if (lease_ != 0) store_->revoke(lease_);
  lease_ = 0;
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

void FacilityLease::mark_evicted(const std::string &cause) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (evicted_.load()) return;
  cause_ = cause;
  evicted_.store(true);
}

void FacilityLease::renew_loop() {
  const auto period = std::chrono::milliseconds(std::max<int64_t>(100, ttl_seconds_ * 1000 / 3));
  const auto ttl = std::chrono::seconds(ttl_seconds_);
  auto last_renewal = Clock::now();
  const LeaseId lease = lease_;
  while (true) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      if (wake_.wait_for(lock, period, [this] { return stopping_; })) return;
    }
    if (evicted_.load()) continue;  // nothing to renew: the owner decides when to rejoin
    const auto now = Clock::now();
    try {
      if (store_->keep_alive(lease) > 0) {
        last_renewal = now;
        continue;
      }
      mark_evicted("facility " + std::to_string(facility_) + ": its lease " + std::to_string(lease) +
                   " in the membership store " + store_->endpoint() + " had ended when it was renewed (" +
                   std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(now - last_renewal).count()) +
                   " ms after the last renewal, TTL " + std::to_string(ttl_seconds_) +
                   " s): the facility was evicted and must rejoin");
    } catch (const std::exception &error) {
      // The store is unreachable: after a whole TTL without a renewal the lease has ended there too.
      if (Clock::now() - last_renewal >= ttl)
        mark_evicted("facility " + std::to_string(facility_) + ": no renewal of its lease " + std::to_string(lease) +
                     " for the TTL of " + std::to_string(ttl_seconds_) + " s (" + error.what() +
                     "): the facility counts as evicted and must rejoin");
    }
  }
}

}  // namespace xffl::federation
