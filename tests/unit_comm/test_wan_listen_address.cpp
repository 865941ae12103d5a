// Where a wan hub listens and what it publishes (comm/wan/listen_address.h): the route to the store's
// host, loopback when the store's host is loopback (one host), and this host's primary address when
// the route is loopback but the store's host is not (rank 0's own name under PMIx, which /etc/hosts
// may map to 127.0.1.1 here while the other hosts resolve it to the real address).
#include "comm/wan/listen_address.h"

#include <string>
#include <vector>

// cmocka last: its fail() macro would rewrite xffl::fail in the headers above.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

namespace {

using xffl::comm::wan::choose_listen_address;
using xffl::comm::wan::host_addresses;
using xffl::comm::wan::is_loopback_name;
using xffl::comm::wan::listen_address;
// Bounds the lookup of a store host given by name ("localhost"); the others are numeric.
constexpr std::chrono::milliseconds kLookup{10000};

void expect_choice(const char *store_host, const char *route, const std::vector<std::string> &host,
                   const char *expected) {
  const std::string chosen = choose_listen_address(store_host, route, host);
  if (chosen != expected)
    fail_msg("store host '%s', route '%s', %zu host addresses: chose '%s', expected '%s'", store_host, route,
             host.size(), chosen.c_str(), expected);
}

void test_loopback_names(void **) {
  for (const char *name : {"127.0.0.1", "127.0.1.1", "localhost", "LocalHost", "::1"})
    if (!is_loopback_name(name)) fail_msg("'%s' is loopback", name);
  for (const char *name : {"", "node07", "10.0.0.1", "198.18.0.1", "128.0.0.1", "localhost.example"})
    if (is_loopback_name(name)) fail_msg("'%s' is not a loopback name", name);
}

void test_choice(void **) {
  const std::vector<std::string> host = {"10.1.2.3", "192.168.7.9"};
  // One host: loopback stays loopback, whatever interfaces the host has (the tests' case).
  expect_choice("127.0.0.1", "127.0.0.1", host, "127.0.0.1");
  expect_choice("localhost", "127.0.0.1", host, "127.0.0.1");
  // The route to a store on another host (or to this host's real address) is what peers come back by.
  expect_choice("198.18.0.1", "198.18.0.2", host, "198.18.0.2");
  expect_choice("node00", "10.1.2.3", host, "10.1.2.3");
  // Rank 0 under PMIx across hosts: its own name routes to loopback here; peers need its real address.
  expect_choice("node00", "127.0.1.1", host, "10.1.2.3");
  expect_choice("node00", "127.0.0.1", host, "10.1.2.3");
  // No store host known: the primary address.
  expect_choice("", "", host, "10.1.2.3");
  // A host without any other address keeps loopback: there is nothing better to publish.
  expect_choice("node00", "127.0.1.1", {}, "127.0.1.1");
  expect_choice("", "", {}, "127.0.0.1");
}

void test_this_host(void **) {
  // Through the system: the store on loopback keeps the hub on loopback (every test's setting).
  assert_string_equal(listen_address("127.0.0.1", kLookup).c_str(), "127.0.0.1");
  assert_string_equal(listen_address("localhost", kLookup).c_str(), "127.0.0.1");
  // The host's addresses are never loopback nor link-local, and an unknown store host takes the first.
  const std::vector<std::string> mine = host_addresses();
  for (const std::string &address : mine)
    if (address.rfind("127.", 0) == 0 || address.rfind("169.254.", 0) == 0)
      fail_msg("host address '%s' is loopback or link-local", address.c_str());
  assert_string_equal(listen_address("", kLookup).c_str(), mine.empty() ? "127.0.0.1" : mine.front().c_str());
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_loopback_names),
      cmocka_unit_test(test_choice),
      cmocka_unit_test(test_this_host),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
