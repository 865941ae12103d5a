// The membership store's behaviour, one test body for both implementations (argv[1]: "xffl" starts
// tools/xffl-federation, "etcd" a 3-member etcd cluster; exit 77 when etcd is not installed). Each
// test works under its own key prefix, so the order of the tests does not matter, except failover,
// which kills a member and runs last.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "backends.h"
#include "federation/endpoint.h"
#include "federation/etcd_store.h"
#include "federation/membership_store.h"
#include "bootstrap_test.h"  // last: cmocka's fail() macro

using bootstrap_test::expect_failure;
using bootstrap_test::outcome_of;
using namespace xffl::federation;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int kTimeoutMs = 20000;
std::unique_ptr<federation_test::Backend> backend;
std::string backend_name;

std::unique_ptr<MembershipStore> connect_store(const std::string &secret = federation_test::kSecret,
                                               int timeout_ms = kTimeoutMs) {
  return connect_membership_store(parse_endpoint(backend->endpoint(), "the test's endpoint"), secret, timeout_ms);
}

// Polls `done` every 100 ms for at most `seconds`; the bound is a failure, never a measurement.
template <typename Done>
bool eventually(int seconds, Done done) {
  auto deadline = Clock::now() + std::chrono::seconds(seconds);
  while (Clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return done();
}

// A lease that is kept alive holds its key past its TTL; left alone, the key disappears and the lease
// cannot be renewed any more.
void test_lease_keepalive_and_expiry(void **) {
  auto store = connect_store();
  // etcd's shortest TTL is 1.5 election timeouts (3 s with the test cluster's 2 s); renewals every 300 ms.
  const int64_t ttl = backend_name == "etcd" ? 3 : 2;
  LeaseId lease = store->grant_lease(ttl);
  assert_true(lease != 0);
  store->put("lease/alive", "facility 0", lease);
  std::optional<KeyValue> entry = store->get("lease/alive");
  assert_true(entry.has_value());
  assert_string_equal(entry->value.c_str(), "facility 0");
  assert_true(entry->lease == lease);
  // Kept alive for more than two TTLs, renewing at a fraction of it.
  auto until = Clock::now() + std::chrono::seconds(2 * ttl + 1);
  while (Clock::now() < until) {
    assert_true(store->keep_alive(lease) > 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
  assert_true(store->get("lease/alive").has_value());
  // Left alone: the key goes (bounded wait), then the lease is gone for good.
  assert_true(eventually(60, [&] { return !store->get("lease/alive").has_value(); }));
  assert_int_equal(store->keep_alive(lease), 0);
  // Putting with the ended lease is the store's refusal, not a silent write.
  expect_failure(outcome_of([&] { store->put("lease/late", "x", lease); }), XFFL_EPEER, {"lease"});
  assert_false(store->get("lease/late").has_value());
}

// A member that dies (SIGKILL, in the middle of keeping its lease alive) loses its lease after the
// TTL: its key disappears for everyone else, with no goodbye.
void test_killed_member_loses_its_lease(void **) {
  int ready[2];
  assert_int_equal(::pipe(ready), 0);
  pid_t child = ::fork();
  if (child == 0) {
    ::close(ready[0]);
    try {
      auto store = connect_store();
      LeaseId lease = store->grant_lease(3);
      store->put("dead/facility-1", "alive", lease);
      ssize_t written = ::write(ready[1], "r", 1);
      (void)written;
      for (;;) {  // kept alive until killed
        store->keep_alive(lease);
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
      }
    } catch (...) {
    }
    std::_Exit(1);
  }
  ::close(ready[1]);
  char byte = 0;
  ssize_t got = ::read(ready[0], &byte, 1);  // returns at EOF too, if the child failed
  ::close(ready[0]);
  auto store = connect_store();
  if (got != 1) {
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
    fail_msg("the member process failed before putting its key");
  }
  assert_true(store->get("dead/facility-1").has_value());
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  assert_true(eventually(60, [&] { return !store->get("dead/facility-1").has_value(); }));
}

// Revoking deletes the lease's keys at once and is harmless when repeated.
void test_revoke(void **) {
  auto store = connect_store();
  LeaseId lease = store->grant_lease(60);
  store->put("revoke/a", "1", lease);
  store->put("revoke/b", "2", lease);
  store->put("revoke/kept", "3");
  store->revoke(lease);
  assert_false(store->get("revoke/a").has_value());
  assert_false(store->get("revoke/b").has_value());
  assert_true(store->get("revoke/kept").has_value());
  store->revoke(lease);
  assert_int_equal(store->keep_alive(lease), 0);
}

void test_compare_and_swap(void **) {
  auto store = connect_store();
  CasResult created = store->compare_and_swap("cas/epoch", 0, "1");
  assert_true(created.succeeded);
  std::optional<KeyValue> entry = store->get("cas/epoch");
  assert_true(entry && entry->value == "1" && entry->mod_revision == created.revision);
  // A second "create" loses and sees the key as it is.
  CasResult again = store->compare_and_swap("cas/epoch", 0, "other");
  assert_false(again.succeeded);
  assert_true(again.current && again.current->value == "1" && again.current->mod_revision == entry->mod_revision);
  // A stale revision loses; the current one wins and moves the revision on.
  CasResult next = store->compare_and_swap("cas/epoch", entry->mod_revision, "2");
  assert_true(next.succeeded);
  assert_true(next.revision > entry->mod_revision);
  CasResult stale = store->compare_and_swap("cas/epoch", entry->mod_revision, "3");
  assert_false(stale.succeeded);
  assert_string_equal(stale.current->value.c_str(), "2");
  assert_true(store->get("cas/epoch")->create_revision == entry->create_revision);
}

// Keys and values are bytes: NULs, high bytes and JSON's special characters travel unchanged.
void test_binary_keys_and_values(void **) {
  auto store = connect_store();
  const std::string key = std::string("bytes/\xc3\xa9\"q\\", 11) + std::string(1, '\0') + "z";
  std::string value;
  for (int i = 0; i < 256; ++i) value += static_cast<char>(i);
  store->put(key, value);
  std::optional<KeyValue> entry = store->get(key);
  assert_true(entry.has_value());
  assert_true(entry->key == key);
  assert_true(entry->value == value);
  store->put("bytes/empty", "");
  assert_true(store->get("bytes/empty").has_value());
  assert_true(store->get("bytes/empty")->value.empty());
  Listing listing = store->list("bytes/");
  assert_int_equal(listing.entries.size(), 2);
  // Limits are checked before anything is sent.
  expect_failure(outcome_of([&] { store->put(std::string(kMaxKey + 1, 'k'), "v"); }), XFFL_EINVAL, {"key of"});
  expect_failure(outcome_of([&] { store->grant_lease(0); }), XFFL_EINVAL, {"TTL 0"});
}

// N processes race to bump an epoch key by compare-and-swap. Exactly one wins per revision, so the
// final value is the number of successful swaps and no revision was won twice.
void test_cas_contention_between_processes(void **) {
  const int processes = 4, attempts = 12;
  {
    auto store = connect_store();
    store->put("race/epoch", "0");
  }
  std::vector<pid_t> children;
  std::vector<int> pipes;
  for (int p = 0; p < processes; ++p) {
    int fds[2];
    assert_int_equal(::pipe(fds), 0);
    pid_t pid = ::fork();
    if (pid == 0) {
      ::close(fds[0]);
      std::string report;
      int code = 0;
      try {
        auto store = connect_store();
        for (int i = 0; i < attempts; ++i) {
          std::optional<KeyValue> now = store->get("race/epoch");
          if (!now) throw std::runtime_error("race/epoch vanished");
          int64_t value = std::stoll(now->value);
          CasResult result = store->compare_and_swap("race/epoch", now->mod_revision, std::to_string(value + 1));
          if (result.succeeded) report += std::to_string(now->mod_revision) + " " + std::to_string(value + 1) + "\n";
        }
      } catch (const std::exception &error) {
        report = std::string("error ") + error.what() + "\n";
        code = 1;
      }
      ssize_t written = ::write(fds[1], report.data(), report.size());
      (void)written;
      std::_Exit(code);
    }
    ::close(fds[1]);
    children.push_back(pid);
    pipes.push_back(fds[0]);
  }
  std::set<int64_t> won_revisions, won_values;
  int wins = 0;
  for (int p = 0; p < processes; ++p) {
    std::string text;
    char buffer[4096];
    ssize_t n;
    while ((n = ::read(pipes[p], buffer, sizeof buffer)) > 0) text.append(buffer, static_cast<size_t>(n));
    ::close(pipes[p]);
    int status = 0;
    ::waitpid(children[p], &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) fail_msg("racer %d failed: %s", p, text.c_str());
    std::istringstream lines(text);
    int64_t revision = 0, value = 0;
    while (lines >> revision >> value) {
      ++wins;
      if (!won_revisions.insert(revision).second) fail_msg("revision %lld won twice", static_cast<long long>(revision));
      if (!won_values.insert(value).second) fail_msg("value %lld written twice", static_cast<long long>(value));
    }
  }
  auto store = connect_store();
  std::optional<KeyValue> final_value = store->get("race/epoch");
  assert_true(final_value.has_value());
  assert_int_equal(std::stoll(final_value->value), wins);
  assert_true(wins >= 1);
  // The values won are exactly 1..wins: every successful swap moved the epoch by one.
  assert_int_equal(*won_values.begin(), 1);
  assert_int_equal(*won_values.rbegin(), wins);
}

void test_prefix_listing_and_changes(void **) {
  auto store = connect_store();
  LeaseId lease = store->grant_lease(60);
  store->put("list/b", "2");
  store->put("list/a", "1");
  store->put("list/c", "3", lease);
  store->put("listed-not", "x");
  store->put("lisu", "x");  // the byte after the prefix's last one: outside it
  Listing listing = store->list("list/");
  assert_int_equal(listing.entries.size(), 3);
  assert_string_equal(listing.entries[0].key.c_str(), "list/a");
  assert_string_equal(listing.entries[1].key.c_str(), "list/b");
  assert_string_equal(listing.entries[2].key.c_str(), "list/c");
  assert_string_equal(listing.entries[2].value.c_str(), "3");
  assert_true(listing.entries[2].lease == lease);
  assert_true(listing.revision >= listing.entries[2].mod_revision);
  assert_int_equal(store->list("nothing-here/").entries.size(), 0);

  // No change: the bounded wait ends empty-handed.
  assert_false(store->wait_for_change("list/", listing, 300).has_value());
  // A write outside the prefix is no change of it.
  store->put("listed-not", "y");
  assert_false(store->wait_for_change("list/", listing, 300).has_value());
  // A write by another client while this one waits ends the wait.
  std::thread writer([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    auto other = connect_store();
    other->put("list/d", "4");
  });
  std::optional<Listing> changed = store->wait_for_change("list/", listing, 15000);
  writer.join();
  assert_true(changed.has_value());
  // etcd is polled: the wait may have returned before the other put; wait once more if so.
  if (changed->entries.size() == 3) changed = store->wait_for_change("list/", listing, 15000);
  assert_int_equal(changed->entries.size(), 4);
  // A lease's end is a change too.
  store->revoke(lease);
  std::optional<Listing> after = store->wait_for_change("list/", *changed, 15000);
  assert_true(after.has_value());
  assert_int_equal(after->entries.size(), 3);
  for (const KeyValue &entry : after->entries) assert_true(entry.key != "list/c");
}

void test_wrong_secret_is_refused(void **) {
  auto wrong = outcome_of([] { connect_store("not-the-secret", 10000); });
  expect_failure(wrong, XFFL_EAUTH, {"federation"});
  auto none = outcome_of([] { connect_store("", 10000); });
  expect_failure(none, XFFL_EAUTH, {"federation"});
}

void test_unreachable_endpoint_is_bounded(void **) {
  const std::string scheme = backend_name == "etcd" ? "etcd://" : "xffl://";
  const std::string endpoint = scheme + "127.0.0.1:" + std::to_string(federation_test::unused_port());
  auto outcome = outcome_of(
      [&] { connect_membership_store(parse_endpoint(endpoint, "the test's endpoint"), federation_test::kSecret, 1500); });
  if (outcome.status != XFFL_ENETWORK && outcome.status != XFFL_ETIMEOUT)
    fail_msg("expected ENETWORK or ETIMEOUT, got %s: %s", xffl_status_string(outcome.status), outcome.message.c_str());
  if (!bootstrap_test::contains(outcome.message, endpoint))
    fail_msg("message \"%s\" does not name %s", outcome.message.c_str(), endpoint.c_str());
}

// xffl only: strangers on the server's port (HTTP, an oversized frame, a bad proof) lose their
// connection, and the server goes on serving the job.
void test_strangers_are_dropped(void **) {
  if (backend_name != "xffl") skip();
  const int port = parse_endpoint(backend->endpoint(), "the test's endpoint").members.at(0).port;
  int http = bootstrap_test::connect_raw(port);
  const std::string request = "GET /v3/kv/range HTTP/1.1\r\nHost: x\r\n\r\n";
  bootstrap_test::send_raw(http, std::vector<uint8_t>(request.begin(), request.end()));
  assert_true(bootstrap_test::closed_by_peer(http, 15000));
  ::close(http);
  int huge = bootstrap_test::connect_raw(port);
  // A Hello header announcing 2 GiB: refused from the header alone.
  bootstrap_test::send_raw(huge, {0x58, 0x46, 0x46, 0x44, 0, 1, 0, 1, 0x80, 0, 0, 0});
  assert_true(bootstrap_test::closed_by_peer(huge, 15000));
  ::close(huge);
  auto store = connect_store();
  store->put("strangers/after", "served");
  assert_string_equal(store->get("strangers/after")->value.c_str(), "served");
}

// etcd only: with one member of three killed, the same client goes on through another member, with
// its data and its lease.
void test_failover(void **) {
  if (backend_name != "etcd") skip();
  auto store = connect_store();
  auto *etcd = dynamic_cast<EtcdStore *>(store.get());
  assert_non_null(etcd);
  LeaseId lease = store->grant_lease(30);
  store->put("failover/member", "up", lease);
  const std::string first = etcd->current_member();
  // The client starts with the first member listed; kill exactly that one.
  assert_true(backend->member_endpoint(0) == "etcd://" + first);
  assert_true(backend->kill_member(0));
  store->put("failover/after", "written");
  assert_true(etcd->current_member() != first);
  assert_string_equal(store->get("failover/after")->value.c_str(), "written");
  assert_true(store->keep_alive(lease) > 0);
  assert_string_equal(store->get("failover/member")->value.c_str(), "up");
  CasResult swapped = store->compare_and_swap("failover/epoch", 0, "1");
  assert_true(swapped.succeeded);
  // A new client listing the dead member first reaches the cluster too.
  auto late = connect_store();
  assert_string_equal(late->get("failover/epoch")->value.c_str(), "1");
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 2 || (std::strcmp(argv[1], "xffl") != 0 && std::strcmp(argv[1], "etcd") != 0)) {
    std::fprintf(stderr, "usage: %s xffl TOOL | etcd\n", argv[0]);
    return 2;
  }
  backend_name = argv[1];
  ::signal(SIGPIPE, SIG_IGN);
  try {
    if (backend_name == "xffl") {
      if (argc < 3) {
        std::fprintf(stderr, "usage: %s xffl PATH-TO-xffl-federation\n", argv[0]);
        return 2;
      }
      backend.reset(federation_test::start_xffl_server(argv[2]));
    } else {
      backend.reset(federation_test::start_etcd_cluster(3));
      if (!backend) {
        std::printf("etcd or etcdctl is not installed (Debian: etcd-server etcd-client): skipped\n");
        return 77;
      }
    }
  } catch (const std::exception &error) {
    std::fprintf(stderr, "could not start the %s store: %s\n", argv[1], error.what());
    return 1;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_compare_and_swap),
      cmocka_unit_test(test_prefix_listing_and_changes),
      cmocka_unit_test(test_revoke),
      cmocka_unit_test(test_binary_keys_and_values),
      cmocka_unit_test(test_wrong_secret_is_refused),
      cmocka_unit_test(test_unreachable_endpoint_is_bounded),
      cmocka_unit_test(test_cas_contention_between_processes),
      cmocka_unit_test(test_lease_keepalive_and_expiry),
      cmocka_unit_test(test_killed_member_loses_its_lease),
      cmocka_unit_test(test_strangers_are_dropped),
      cmocka_unit_test(test_failover),
  };
  int failed = cmocka_run_group_tests_name(backend_name == "etcd" ? "membership store on etcd"
                                                                  : "membership store on xffl-federation",
                                           tests, nullptr, nullptr);
  backend.reset();
  return failed;
}
