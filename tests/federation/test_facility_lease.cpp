// The facility lease (src/federation/facility_lease.h) against the built-in server: its thread keeps
// the member key alive past several TTLs; a lease that ends under it (revoked by another connection,
// as an expiry while the process was stopped would end it) is found, counted with its cause, and the
// facility registered again under a new incarnation; destruction stops the thread and removes the key; a
// store slow to take new clients (a relay holding every connection after the first) costs it nothing,
// since it renews on the connection it registered on. Threads inside one process: this one also runs
// under ThreadSanitizer.
// With "etcd" (a 3-member cluster): a store that answers no one for several TTLs (no leader) but keeps
// the lease is no eviction.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

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

// A TCP relay in front of the store: its first connection goes through at once, every later one only
// after `hold` (a store slow to take new clients, as etcd checking a password with bcrypt on a loaded
// machine). One thread per connection; the destructor ends them all.
class SlowToAcceptRelay {
 public:
  // upstream: the store on this host (the test's xffl-federation listens on 127.0.0.1).
  SlowToAcceptRelay(const Member &upstream, std::chrono::milliseconds hold) : upstream_(upstream), hold_(hold) {
    listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address = loopback(0);
    socklen_t length = sizeof address;
    assert_true(listener_ >= 0 && ::bind(listener_, reinterpret_cast<sockaddr *>(&address), sizeof address) == 0 &&
                ::listen(listener_, 16) == 0 &&
                ::getsockname(listener_, reinterpret_cast<sockaddr *>(&address), &length) == 0);
    port_ = ntohs(address.sin_port);
    acceptor_ = std::thread([this] { accept_loop(); });
  }
  ~SlowToAcceptRelay() {
    stopping_ = true;
    acceptor_.join();  // then nothing adds to relays_
    for (std::thread &thread : relays_) thread.join();
    ::close(listener_);
  }
  std::string endpoint() const { return "xffl://127.0.0.1:" + std::to_string(port_); }

 private:
  static sockaddr_in loopback(int port) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return address;
  }
  void accept_loop() {
    for (int accepted = 0; !stopping_;) {
      pollfd waiting{listener_, POLLIN, 0};
      if (::poll(&waiting, 1, 50) <= 0) continue;
      const int client = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
      if (client < 0) continue;
      const bool held = accepted++ > 0;
      relays_.emplace_back([this, client, held] { relay(client, held); });
    }
  }
  void relay(int client, bool held) {
    for (auto until = Clock::now() + (held ? hold_ : std::chrono::milliseconds(0)); Clock::now() < until && !stopping_;)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const int server = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address = loopback(upstream_.port);
    if (server >= 0 && ::connect(server, reinterpret_cast<sockaddr *>(&address), sizeof address) == 0) {
      pollfd both[2] = {{client, POLLIN, 0}, {server, POLLIN, 0}};
      char buffer[65536];
      for (bool open = true; open && !stopping_;) {
        if (::poll(both, 2, 50) <= 0) continue;
        for (int side = 0; side < 2 && open; ++side) {
          if (!(both[side].revents & (POLLIN | POLLHUP | POLLERR))) continue;
          const ssize_t got = ::read(both[side].fd, buffer, sizeof buffer);
          open = got > 0 && ::send(both[1 - side].fd, buffer, static_cast<size_t>(got), MSG_NOSIGNAL) == got;
        }
      }
    }
    if (server >= 0) ::close(server);
    ::close(client);
  }

  Member upstream_;
  std::chrono::milliseconds hold_;
  int listener_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread acceptor_;
  std::vector<std::thread> relays_;  // added to by the acceptor alone
};

// A store that takes new clients slowly (each after 2.5 s, more than the TTL of 1 s that bounds a
// renewal): the lease registers within its timeout and then renews on that same connection, so it
// neither fails nor loses the facility. (It once opened a second connection for its thread, bounded by
// the TTL: on a loaded machine etcd's answer came later than that, and the lease holder died.)
void test_lease_needs_no_second_connection(void **) {
  const Endpoint direct = endpoint();
  SlowToAcceptRelay relay(direct.members.at(0), std::chrono::milliseconds(2500));
  auto store = connect_membership_store(direct, federation_test::kSecret, kTimeoutMs);
  const std::string prefix = federation_prefix("lease-slow-accept-test");
  std::unique_ptr<FacilityLease> lease;
  try {
    lease = std::make_unique<FacilityLease>(parse_endpoint(relay.endpoint(), "the relay"), federation_test::kSecret,
                                            kTimeoutMs, prefix, 3, 1);
  } catch (const std::exception &error) {
    fail_msg("the lease failed through a store slow to take new clients: %s", error.what());
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(3000));  // three TTLs of renewals through the relay
  std::optional<KeyValue> entry = store->get(member_key(prefix, 3));
  assert_true(entry && entry->value == lease->incarnation());
  assert_int_equal(lease->evictions(), 0);
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
      cmocka_unit_test(test_lease_needs_no_second_connection),
      cmocka_unit_test(test_invalid_arguments),
  };
  int failed = cmocka_run_group_tests_name("facility lease", tests, nullptr, nullptr);
  backend.reset();
  return failed;
}
