// Unit tests of the federation's pure parts: XFFL_FEDERATION's parser, the federation settings from an
// environment, the JSON reader etcd's answers go through, and the built-in server's core with time
// passed in (lease expiry without sleeping).
#include <chrono>
#include <string>

#include "federation/endpoint.h"
#include "federation/federation_core.h"
#include "federation/json.h"
#include "federation/settings.h"
#include "bootstrap_test.h"  // last: cmocka's fail() macro

using bootstrap_test::expect_failure;
using bootstrap_test::outcome_of;
using namespace xffl::federation;

namespace {

void expect_bad(const std::string &text, const std::string &phrase) {
  expect_failure(outcome_of([&] { parse_endpoint(text, "XFFL_FEDERATION"); }), XFFL_EINVAL,
                 {"XFFL_FEDERATION='" + text + "'", phrase});
}

void test_etcd_endpoints(void **) {
  Endpoint e = parse_endpoint("etcd://h1:2379,h2:2380,10.0.0.3:2379", "XFFL_FEDERATION");
  assert_true(e.kind == Endpoint::Kind::Etcd);
  assert_string_equal(e.user.c_str(), "xffl");
  assert_int_equal(e.members.size(), 3);
  assert_string_equal(e.members[1].host.c_str(), "h2");
  assert_int_equal(e.members[1].port, 2380);
  assert_string_equal(e.members[2].text().c_str(), "10.0.0.3:2379");
  Endpoint with_user = parse_endpoint("etcd://trainer@[::1]:2379", "XFFL_FEDERATION");
  assert_string_equal(with_user.user.c_str(), "trainer");
  assert_string_equal(with_user.members[0].host.c_str(), "::1");
  assert_string_equal(with_user.members[0].text().c_str(), "[::1]:2379");
}

void test_xffl_endpoint(void **) {
  Endpoint e = parse_endpoint("xffl://127.0.0.1:29600", "XFFL_FEDERATION");
  assert_true(e.kind == Endpoint::Kind::Xffl);
  assert_int_equal(e.members.size(), 1);
  assert_int_equal(e.members[0].port, 29600);
  assert_string_equal(e.text.c_str(), "xffl://127.0.0.1:29600");
}

void test_bad_endpoints(void **) {
  expect_bad("h1:2379", "no scheme");
  expect_bad("http://h1:2379", "unknown scheme 'http'");
  expect_bad("etcd://", "no member");
  expect_bad("etcd://h1", "no port");
  expect_bad("etcd://h1:2379,,h2:2379", "empty");
  expect_bad("etcd://h1:2379,", "empty");
  expect_bad("etcd://h1:0", "not an integer in [1, 65535]");
  expect_bad("etcd://h1:65536", "not an integer in [1, 65535]");
  expect_bad("etcd://h1:x", "not an integer");
  expect_bad("etcd://:2379", "no host");
  expect_bad("etcd://::1:2379", "more than one ':'");
  expect_bad("etcd://[::1:2379", "without closing");
  expect_bad("etcd://@h1:2379", "user before '@' is empty");
  expect_bad("xffl://a:1,b:2", "exactly one server");
  expect_bad("xffl://u@a:1", "only meaningful for etcd");
}

// The lease TTL: XFFL_TIMEOUT / 20 within [2, 15] s, at most half the timeout, at least 1 s; a TTL set
// is rounded up to whole seconds, and under continue it must be below the timeout.
void test_lease_ttl(void **) {
  assert_int_equal(default_lease_ttl_seconds(300000), 15);  // 300 s / 20
  assert_int_equal(default_lease_ttl_seconds(600000), 15);  // at most 15 s
  assert_int_equal(default_lease_ttl_seconds(60000), 3);
  // Small timeouts: at most half the timeout, at least 1 s (a lease must end inside the timeout).
  assert_int_equal(default_lease_ttl_seconds(5000), 2);
  assert_int_equal(default_lease_ttl_seconds(3000), 1);
  assert_int_equal(default_lease_ttl_seconds(2000), 1);
  assert_int_equal(default_lease_ttl_seconds(1000), 1);
  xffl::Environment env;
  assert_int_equal(continue_lease_ttl_seconds(env, 300000), 15);
  assert_int_equal(continue_lease_ttl_seconds(env, 2000), 1);
  // Under continue the TTL must be below the timeout; at 1 s even the default is not.
  expect_failure(outcome_of([&] { continue_lease_ttl_seconds(env, 1000); }), XFFL_EINVAL,
                 {"XFFL_FEDERATION_LEASE_TTL = 1 s (its default", "XFFL_TIMEOUT (XFFL_OPT_TIMEOUT_MS) = 1000 ms",
                  "at most half the timeout, at least 1 s", "or a timeout above 1 s"});
  env["XFFL_FEDERATION_LEASE_TTL"] = "2.5";
  assert_int_equal(continue_lease_ttl_seconds(env, 300000), 3);  // rounded up
  assert_int_equal(continue_lease_ttl_seconds(env, 3001), 3);
  expect_failure(outcome_of([&] { continue_lease_ttl_seconds(env, 3000); }), XFFL_EINVAL,
                 {"XFFL_FEDERATION_LEASE_TTL = 3 s (set to 2500 ms, rounded up to whole seconds) is not below "
                  "XFFL_TIMEOUT (XFFL_OPT_TIMEOUT_MS) = 3000 ms"});
  env["XFFL_FEDERATION_LEASE_TTL"] = "4";
  assert_int_equal(continue_lease_ttl_seconds(env, 300000), 4);
  expect_failure(outcome_of([&] { continue_lease_ttl_seconds(env, 4000); }), XFFL_EINVAL,
                 {"XFFL_FEDERATION_LEASE_TTL = 4 s (as set) is not below"});
}

// etcds:// is etcd over HTTPS; its files come from XFFL_FEDERATION_CA, _CERT and _KEY, only with etcds://,
// the certificate with its key, each readable now.
void test_tls_settings(void **) {
  Endpoint e = parse_endpoint("etcds://trainer@h1:2379,h2:2379", "XFFL_FEDERATION");
  assert_true(e.kind == Endpoint::Kind::Etcd);
  assert_true(e.tls);
  assert_string_equal(e.user.c_str(), "trainer");
  assert_int_equal(e.members.size(), 2);
  assert_false(parse_endpoint("etcd://h1:2379", "XFFL_FEDERATION").tls);

  const std::string readable = "/proc/self/status";  // any file every process can read
  const Endpoint tls = parse_endpoint("etcds://127.0.0.1:2379", "XFFL_FEDERATION");
  // Reads the files of `env` into a copy of `endpoint`.
  auto with_files = [](const xffl::Environment &env, Endpoint endpoint) {
    read_tls_files(env, &endpoint);
    return endpoint;
  };
  xffl::Environment env;
  assert_true(with_files(env, tls).tls_files.ca.empty());  // the system's CA store
  env["XFFL_FEDERATION_CA"] = readable;
  env["XFFL_FEDERATION_CERT"] = readable;
  env["XFFL_FEDERATION_KEY"] = readable;
  const Endpoint files = with_files(env, tls);
  assert_string_equal(files.tls_files.ca.c_str(), readable.c_str());
  assert_string_equal(files.tls_files.cert.c_str(), readable.c_str());
  assert_string_equal(files.tls_files.key.c_str(), readable.c_str());

  xffl::Environment no_key = env;
  no_key.erase("XFFL_FEDERATION_KEY");
  expect_failure(outcome_of([&] { with_files(no_key, tls); }), XFFL_EINVAL,
                 {"XFFL_FEDERATION_CERT is set but XFFL_FEDERATION_KEY is not"});
  xffl::Environment missing = env;
  missing["XFFL_FEDERATION_CA"] = "/nonexistent/ca.pem";
  expect_failure(outcome_of([&] { with_files(missing, tls); }), XFFL_EINVAL,
                 {"XFFL_FEDERATION_CA='/nonexistent/ca.pem'", "not a file this process can read"});
  const Endpoint plain = parse_endpoint("etcd://127.0.0.1:2379", "XFFL_FEDERATION");
  expect_failure(outcome_of([&] { with_files(env, plain); }), XFFL_EINVAL,
                 {"XFFL_FEDERATION_CA is set", "does not use TLS", "etcds://"});
}

void test_json(void **) {
  json::Value v = json::parse(
      R"({"header":{"revision":"7"},"succeeded":true,"kvs":[{"key":"YQ==","lease":"12"}],"code":5,"m":"a\"b\u00e9"})");
  assert_int_equal(v.find("header")->find("revision")->as_int64(), 7);
  assert_true(v.find("succeeded")->boolean);
  assert_int_equal(v.find("kvs")->items.size(), 1);
  assert_string_equal(json::unbase64(v.find("kvs")->items[0].find("key")->text).c_str(), "a");
  assert_int_equal(v.find("code")->as_int64(), 5);
  assert_string_equal(v.find("m")->text.c_str(), "a\"b\xc3\xa9");
  assert_null(v.find("absent"));
  for (const char *bad : {"", "{", "{\"a\":}", "[1,]", "{\"a\":1} x", "\"open", "tru"})
    assert_true(outcome_of([&] { json::parse(bad); }).status == XFFL_EINTERNAL);  // std::runtime_error
  std::string deep(100, '[');
  assert_false(outcome_of([&] { json::parse(deep); }).ok());
  for (const std::string &bytes : {std::string(), std::string("a"), std::string("ab"), std::string("abc"),
                                  std::string("\0\xff\x10", 3)})
    assert_true(json::unbase64(json::base64(bytes)) == bytes);
  assert_string_equal(json::quote("a\"\\\n").c_str(), "\"a\\\"\\\\\\u000a\"");
}

void test_core_leases_with_time_passed_in(void **) {
  using std::chrono::seconds;
  FederationCore core;
  auto t0 = FederationCore::Clock::now();
  LeaseId lease = core.grant(5, t0);
  int64_t r1 = core.put("m/0", "a", lease, t0);
  core.put("m/1", "b", 0, t0);
  assert_true(core.get("m/0", t0 + seconds(4)).has_value());
  assert_int_equal(core.keep_alive(lease, t0 + seconds(4)), 5);   // renewed until t0 + 9
  assert_true(core.get("m/0", t0 + seconds(8)).has_value());
  assert_false(core.changed_since("m/", r1 + 1, t0 + seconds(8)));
  assert_false(core.get("m/0", t0 + seconds(9)).has_value());     // ended at t0 + 9
  assert_true(core.changed_since("m/", r1 + 1, t0 + seconds(9)));  // its end is a change of the prefix
  assert_int_equal(core.keep_alive(lease, t0 + seconds(9)), 0);
  assert_true(core.get("m/1", t0 + seconds(100)).has_value());     // no lease: stays
  expect_failure(outcome_of([&] { core.put("m/2", "c", lease, t0 + seconds(10)); }), XFFL_EPEER, {"lease"});
  expect_failure(outcome_of([&] { core.grant(0, t0); }), XFFL_EINVAL, {"TTL 0"});
  // Overwriting a key with another lease moves it: the old lease's end leaves it alone.
  LeaseId a = core.grant(5, t0 + seconds(10)), b = core.grant(50, t0 + seconds(10));
  core.put("m/3", "x", a, t0 + seconds(10));
  core.put("m/3", "y", b, t0 + seconds(10));
  assert_true(core.get("m/3", t0 + seconds(20)).has_value());
  assert_int_equal(core.lease_count(), 1);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_etcd_endpoints),
      cmocka_unit_test(test_xffl_endpoint),
      cmocka_unit_test(test_bad_endpoints),
      cmocka_unit_test(test_lease_ttl),
      cmocka_unit_test(test_tls_settings),
      cmocka_unit_test(test_json),
      cmocka_unit_test(test_core_leases_with_time_passed_in),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
