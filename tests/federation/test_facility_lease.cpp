// The facility lease (src/federation/facility_lease.h) against the built-in server: its thread keeps
// the member key alive past several TTLs; a lease that ends under it (revoked by another connection,
// as an expiry while the process was stopped would end it) is found, counted with its cause, and the
// facility registered again under a new incarnation; destruction stops the thread and removes the key. Threads
// inside one process: this one also runs under ThreadSanitizer.
// With "etcd" (a 3-member cluster): a store that answers no one for several TTLs (no leader) but keeps
// the lease is no eviction.
#include <signal.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <thread>

#include "backends.h"
#include "federation/endpoint.h"
#include "federation/facility_lease.h"
#include "federation/membership_store.h"
#include "bootstrap_test.h"  // last: cmocka's fail() macro

using bootstrap_test::expect_failure;
using bootstrap_test::outcome_of;
using namespace xffl::federation;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int kTimeoutMs = 20000;
std::unique_ptr<federation_test::Backend> backend;

Endpoint endpoint() { return parse_endpoint(backend->endpoint(), "the test's endpoint"); }

template <typename Done>
bool eventually(int seconds, Done done) {
  auto deadline = Clock::now() + std::chrono::seconds(seconds);
  while (Clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return done();
}

void test_lease_lives_is_evicted_and_rejoins(void **) {
  auto store = connect_membership_store(endpoint(), federation_test::kSecret, kTimeoutMs);
  const std::string prefix = federation_prefix("lease-test");
  const std::string key = member_key(prefix, 4);
  assert_string_equal(key.c_str(), "xffl/lease-test/live/member/000004");
  std::string first;
  {
    FacilityLease lease(endpoint(), federation_test::kSecret, kTimeoutMs, prefix, 4, 1);
    first = lease.incarnation();
    assert_int_equal(first.size(), 16);
    // Three TTLs later the key is still there: the thread renews it.
    std::this_thread::sleep_for(std::chrono::milliseconds(3000));
    std::optional<KeyValue> entry = store->get(key);
    assert_true(entry && entry->value == first);
    assert_int_equal(lease.evictions(), 0);
    assert_true(lease.registered());
    assert_string_equal(lease.eviction_cause().c_str(), "");
    // The lease ends under it: the next renewal finds out and registers a new incarnation.
    store->revoke(entry->lease);
    assert_true(eventually(30, [&] { return lease.evictions() == 1 && lease.registered(); }));
    const std::string cause = lease.eviction_cause();
    assert_true(bootstrap_test::contains(cause, "facility 4") && bootstrap_test::contains(cause, "evicted"));
    const std::string second = lease.incarnation();
    assert_true(second != first);
    entry = store->get(key);
    assert_true(entry && entry->value == second);
    // ...and keeps that one alive.
    std::this_thread::sleep_for(std::chrono::milliseconds(2000));
    entry = store->get(key);
    assert_true(entry && entry->value == second);
    assert_int_equal(lease.evictions(), 1);
  }
  // Destroyed: the lease is revoked, the key is gone at once.
  assert_false(store->get(key).has_value());
}

// Two of three etcd members down for three TTLs: no leader, no renewal gets an answer. Back with a
// quorum, the new leader has extended every lease (etcd's lessor, on promotion): the facility is still
// a member under its first incarnation, never counted as evicted.
void test_lease_outlives_an_election(void **) {
  auto store = connect_membership_store(endpoint(), federation_test::kSecret, kTimeoutMs);
  const std::string prefix = federation_prefix("lease-election-test");
  FacilityLease lease(endpoint(), federation_test::kSecret, kTimeoutMs, prefix, 1, 1);
  const std::string first = lease.incarnation();
  assert_true(backend->kill_member(1) && backend->kill_member(2));
  std::this_thread::sleep_for(std::chrono::milliseconds(3000));
  assert_true(backend->restart_member(1) && backend->restart_member(2));
  // A few renewals after the quorum is back (restart_member returns once the member answers).
  std::this_thread::sleep_for(std::chrono::milliseconds(2000));
  assert_int_equal(lease.evictions(), 0);
  assert_true(lease.registered());
  assert_string_equal(lease.incarnation().c_str(), first.c_str());
  std::optional<KeyValue> entry = store->get(member_key(prefix, 1));
  assert_true(entry && entry->value == first);
}

// etcd raises a short TTL to 1.5 election timeouts (3 s with this cluster's 2 s): a lease that would
// then outlive the timeout is refused, naming both TTLs; below the timeout it is taken.
void test_granted_ttl_not_below_the_timeout(void **) {
  const std::string prefix = federation_prefix("lease-granted-test");
  expect_failure(outcome_of([&] { FacilityLease lease(endpoint(), federation_test::kSecret, 3000, prefix, 2, 1); }),
                 XFFL_EINVAL, {"facility 2's lease was granted for 3 s though 1 s were asked", "--election-timeout"});
  FacilityLease lease(endpoint(), federation_test::kSecret, 3001, prefix, 2, 1);
  assert_true(lease.registered());
}

void test_invalid_arguments(void **) {
  expect_failure(outcome_of([] { FacilityLease lease(endpoint(), federation_test::kSecret, kTimeoutMs, "p/", -1, 2); }),
                 XFFL_EINVAL, {"facility -1"});
  expect_failure(outcome_of([] { FacilityLease lease(endpoint(), federation_test::kSecret, kTimeoutMs, "p/", 0, 0); }),
                 XFFL_EINVAL, {"0"});
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s PATH-TO-xffl-federation | etcd\n", argv[0]);
    return 2;
  }
  ::signal(SIGPIPE, SIG_IGN);
  if (std::strcmp(argv[1], "etcd") == 0) {
    try {
      backend.reset(federation_test::start_etcd_cluster(3));
    } catch (const std::exception &error) {
      std::fprintf(stderr, "could not start the etcd cluster: %s\n", error.what());
      return 1;
    }
    if (!backend) {
      std::printf("etcd or etcdctl is not installed: skipped\n");
      return 77;
    }
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_lease_outlives_an_election),
                                       cmocka_unit_test(test_granted_ttl_not_below_the_timeout)};
    int failed = cmocka_run_group_tests_name("facility lease on etcd", tests, nullptr, nullptr);
    backend.reset();
    return failed;
  }
  try {
    backend.reset(federation_test::start_xffl_server(argv[1]));
  } catch (const std::exception &error) {
    std::fprintf(stderr, "could not start xffl-federation: %s\n", error.what());
    return 1;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_lease_lives_is_evicted_and_rejoins),
      cmocka_unit_test(test_invalid_arguments),
  };
  int failed = cmocka_run_group_tests_name("facility lease", tests, nullptr, nullptr);
  backend.reset();
  return failed;
}
