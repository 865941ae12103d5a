// net::resolve and the bounded lookup under it (bootstrap/name_lookup.h): numeric addresses inline,
// whatever the deadline; a name with the deadline past is Timeout at once; an unknown name is
// permanent. A silent DNS server, the case the deadline is for, needs a resolv.conf of its own:
// tests/netns/run_dns_silent_test.sh makes one in a namespace, runs ranks against it, and runs this
// program there for test_abandoned_lookup.
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "bootstrap/name_lookup.h"
#include "bootstrap/socket.h"

// cmocka last: its fail() macro would clash with std::ios::fail and xffl::fail.
#include "bootstrap_test.h"

using namespace xffl::bootstrap;

namespace {

using std::chrono::seconds;

net::Clock::time_point past() { return net::Clock::now() - seconds(1); }
net::Clock::time_point soon() { return net::Clock::now() + seconds(30); }

const char *kind_name(net::Resolved::Kind kind) {
  switch (kind) {
    case net::Resolved::Ok: return "Ok";
    case net::Resolved::Permanent: return "Permanent";
    case net::Resolved::Temporary: return "Temporary";
    case net::Resolved::Timeout: return "Timeout";
  }
  return "?";
}

void expect_kind(const net::Resolved &resolved, net::Resolved::Kind kind, const char *what) {
  if (resolved.kind != kind)
    fail_msg("%s: %s (%s), expected %s", what, kind_name(resolved.kind), resolved.error.c_str(), kind_name(kind));
}

// A numeric address asks no server and starts no thread: it resolves even with the deadline past,
// where a name could not.
void test_numeric_inline(void **) {
  net::Resolved v4 = net::resolve("127.0.0.1", 4242, false, past());
  expect_kind(v4, net::Resolved::Ok, "127.0.0.1");
  assert_int_equal(v4.addresses.size(), 1);
  assert_string_equal(v4.addresses[0].text.c_str(), "127.0.0.1:4242");
  net::Resolved v6 = net::resolve("::1", 4242, false, past());
  expect_kind(v6, net::Resolved::Ok, "::1");
  assert_int_equal(v6.addresses.size(), 1);
  assert_int_equal(v6.addresses[0].storage.ss_family, AF_INET6);
  net::Resolved wildcard = net::resolve("", 0, true, past());
  expect_kind(wildcard, net::Resolved::Ok, "the wildcard address");
  assert_true(!wildcard.addresses.empty());
}

void test_name_with_deadline_past(void **) {
  net::Resolved resolved = net::resolve("localhost", 80, false, past());
  expect_kind(resolved, net::Resolved::Timeout, "localhost with the deadline past");
  assert_true(resolved.addresses.empty());
}

void test_name_in_time(void **) {
  net::Resolved resolved = net::resolve("localhost", 80, false, soon());  // /etc/hosts: no server asked
  expect_kind(resolved, net::Resolved::Ok, "localhost");
  bool loopback = false;
  for (const net::Address &address : resolved.addresses)
    loopback |= address.text == "127.0.0.1:80" || address.text == "[::1]:80";
  if (!loopback) fail_msg("localhost resolved to no loopback address (first: %s)", resolved.addresses[0].text.c_str());
}

// An empty label is refused by the resolver before any query is sent: a permanent error, with the
// resolver's reason, at once and without any DNS server.
void test_unknown_name_is_permanent(void **) {
  net::Resolved resolved = net::resolve("store..facility.test", 80, false, soon());
  expect_kind(resolved, net::Resolved::Permanent, "store..facility.test");
  assert_true(resolved.addresses.empty());
  assert_false(resolved.error.empty());
}

// A name where only numeric hosts are allowed: getaddrinfo's own answer, inline.
void test_numeric_only_hints(void **) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICHOST;
  net::NameLookup lookup = net::lookup_name("localhost", "80", hints, past());
  assert_int_equal(lookup.kind, net::NameLookup::Failed);
  assert_int_equal(lookup.rc, EAI_NONAME);
}

void test_timeout_text(void **) {
  assert_string_equal(net::lookup_timeout_text("store.facility.test", 2000, "XFFL_TIMEOUT").c_str(),
                      "the name lookup of 'store.facility.test' did not finish within 2000 ms (XFFL_TIMEOUT); does "
                      "this host reach a DNS server that answers for it?");
  assert_string_equal(net::lookup_timeout_text("h", 5, "").c_str(),
                      "the name lookup of 'h' did not finish within 5 ms; does this host reach a DNS server that "
                      "answers for it?");
}

// Many lookups at once, each handing its result from its worker to its caller (ThreadSanitizer checks
// the hand-over).
void test_concurrent_lookups(void **) {
  std::vector<std::thread> callers;
  std::vector<int> ok(8, 0);
  for (size_t i = 0; i < ok.size(); ++i)
    callers.emplace_back([&ok, i] {
      for (int round = 0; round < 5; ++round)
        ok[i] += net::resolve("localhost", 80 + round, false, soon()).kind == net::Resolved::Ok;
    });
  for (std::thread &caller : callers) caller.join();
  for (size_t i = 0; i < ok.size(); ++i)
    if (ok[i] != 5) fail_msg("caller %zu: %d of 5 lookups of localhost succeeded", i, ok[i]);
}

// Lookup workers alive in this process (name_lookup.cpp names them xffl-lookup).
int lookup_workers() {
  int found = 0;
  for (const auto &task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(task.path() / "comm");
    std::string name;
    found += std::getline(comm, name) && name == "xffl-lookup";
  }
  return found;
}

// Whether this process is down to `workers` lookup workers within `bound`.
bool workers_within(int workers, std::chrono::milliseconds bound) {
  const auto deadline = net::Clock::now() + bound;
  while (lookup_workers() > workers && net::Clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  return lookup_workers() == workers;
}

// A lookup given up at its deadline while its worker still waits for the server: the worker ends
// later on its own, frees what it found (LeakSanitizer) and touches nothing of its caller's
// (ThreadSanitizer). Needs a DNS server that does not answer: run by tests/netns/run_dns_silent_test.sh
// with SILENT_DNS_NAME set (and RES_OPTIONS making the resolver give up after a second);
// skipped elsewhere.
void test_abandoned_lookup(void **) {
  const char *name = std::getenv("SILENT_DNS_NAME");
  if (!name || !*name) skip();
  // The workers of the earlier tests' lookups (finished, maybe still exiting) first: then this
  // lookup's worker is the only one. 30 s only bounds a hang.
  if (!workers_within(0, seconds(30))) fail_msg("%d lookup workers before the lookup, expected 0", lookup_workers());
  net::Resolved resolved = net::resolve(name, 80, false, net::Clock::now() + std::chrono::milliseconds(200));
  expect_kind(resolved, net::Resolved::Timeout, name);
  assert_true(resolved.addresses.empty());
  assert_int_equal(lookup_workers(), 1);  // its worker, still waiting for the server
  // The worker ends when the resolver gives up (RES_OPTIONS: about a second).
  if (!workers_within(0, seconds(30)))
    fail_msg("the worker of the abandoned lookup of %s was still running after 30 s", name);
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_numeric_inline),
      cmocka_unit_test(test_name_with_deadline_past),
      cmocka_unit_test(test_name_in_time),
      cmocka_unit_test(test_unknown_name_is_permanent),
      cmocka_unit_test(test_numeric_only_hints),
      cmocka_unit_test(test_timeout_text),
      cmocka_unit_test(test_concurrent_lookups),
      cmocka_unit_test(test_abandoned_lookup),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
