// The federation's membership store on etcd over TLS (etcds://), against a real etcd member the test
// starts on loopback with HTTPS and --client-cert-auth, and certificates it makes with openssl (exit 77
// when etcd, etcdctl or openssl is missing). The endpoint and its files come from an environment, as a
// facility job reads them (XFFL_FEDERATION, XFFL_FEDERATION_CA, _CERT, _KEY): the job secret then only
// ever crosses inside TLS, to a member whose certificate the job's CA verifies.
#include <signal.h>

#include <cstdio>
#include <memory>
#include <string>

#include "backends.h"
#include "common/environment.h"
#include "federation/membership_store.h"
#include "federation/settings.h"
#include "bootstrap_test.h"  // last: cmocka's fail() macro

using bootstrap_test::expect_failure;
using bootstrap_test::outcome_of;
using namespace xffl::federation;

namespace {

constexpr int kTimeoutMs = 20000;
std::unique_ptr<federation_test::Backend> backend;

// The facility job's variables for this member: its CA and client certificate unless told otherwise.
xffl::Environment variables(const std::string &ca = "ca.pem", bool client_certificate = true) {
  xffl::Environment env{{"XFFL_FEDERATION", backend->endpoint()}, {"XFFL_FACILITY", "0"}};
  if (!ca.empty()) env["XFFL_FEDERATION_CA"] = backend->tls_file(ca);
  if (client_certificate) {
    env["XFFL_FEDERATION_CERT"] = backend->tls_file("client.pem");
    env["XFFL_FEDERATION_KEY"] = backend->tls_file("client.key");
  }
  return env;
}

// As a facility job's xffl_set_global does (state/facility_link.cpp): the endpoint, then its files.
std::unique_ptr<MembershipStore> connect_with(const xffl::Environment &env, int timeout_ms = kTimeoutMs,
                                              const std::string &secret = federation_test::kSecret) {
  Endpoint endpoint = parse_endpoint(env.at("XFFL_FEDERATION"), "XFFL_FEDERATION");
  read_tls_files(env, &endpoint);
  return connect_membership_store(endpoint, secret, timeout_ms);
}

// Over TLS the store behaves as over plain HTTP: a leased key, a compare-and-swap, a listing.
void test_round_trip_over_tls(void **) {
  auto store = connect_with(variables());
  LeaseId lease = store->grant_lease(5);
  store->put("xffl/tls/member/0", "facility 0", lease);
  std::optional<KeyValue> member = store->get("xffl/tls/member/0");
  assert_true(member.has_value());
  assert_string_equal(member->value.c_str(), "facility 0");
  assert_true(store->keep_alive(lease) > 0);
  CasResult first = store->compare_and_swap("xffl/tls/epoch", 0, "1");
  assert_true(first.succeeded);
  CasResult stale = store->compare_and_swap("xffl/tls/epoch", 0, "2");
  assert_false(stale.succeeded);
  assert_string_equal(stale.current->value.c_str(), "1");
  assert_int_equal(store->list("xffl/tls/").entries.size(), 2);
  store->revoke(lease);
  assert_false(store->get("xffl/tls/member/0").has_value());
}

// A member whose certificate the job's CA did not sign never gets the secret: XFFL_EAUTH at once,
// naming the member and the CA, whether the CA is another one or the system's store.
void test_unverified_member_is_refused(void **) {
  expect_failure(outcome_of([] { connect_with(variables("other-ca.pem"), 10000); }), XFFL_EAUTH,
                 {"127.0.0.1", "XFFL_FEDERATION_CA=" + backend->tls_file("other-ca.pem"), "does not verify"});
  expect_failure(outcome_of([] { connect_with(variables(""), 10000); }), XFFL_EAUTH,
                 {"127.0.0.1", "the system's CA store", "does not verify"});
}

// etcd started with --client-cert-auth refuses a client without a certificate: a bounded error
// naming the endpoint, never a hang.
void test_missing_client_certificate_is_bounded(void **) {
  auto outcome = outcome_of([] { connect_with(variables("ca.pem", false), 3000); });
  if (outcome.status != XFFL_ENETWORK && outcome.status != XFFL_ETIMEOUT)
    fail_msg("expected ENETWORK or ETIMEOUT, got %s: %s", xffl_status_string(outcome.status), outcome.message.c_str());
  assert_true(bootstrap_test::contains(outcome.message, backend->endpoint()));
}

// Plain etcd:// to a TLS member is a bounded error too (and the variables of TLS are refused with it).
void test_plain_http_to_a_tls_member_is_bounded(void **) {
  std::string plain = backend->endpoint();
  plain.replace(0, 8, "etcd://");  // "etcds://" -> "etcd://"
  auto outcome = outcome_of([&] {
    connect_with(xffl::Environment{{"XFFL_FEDERATION", plain}, {"XFFL_FACILITY", "0"}}, 3000);
  });
  if (outcome.status != XFFL_ENETWORK && outcome.status != XFFL_ETIMEOUT)
    fail_msg("expected ENETWORK or ETIMEOUT, got %s: %s", xffl_status_string(outcome.status), outcome.message.c_str());
}

// Inside TLS, the secret still decides: a wrong one is XFFL_EAUTH.
void test_wrong_secret_over_tls(void **) {
  expect_failure(outcome_of([] { connect_with(variables(), 10000, "not-the-secret"); }), XFFL_EAUTH, {"federation"});
}

}  // namespace

int main() {
  ::signal(SIGPIPE, SIG_IGN);
  try {
    backend.reset(federation_test::start_etcd_cluster(1, true));
    if (!backend) {
      std::printf("etcd, etcdctl or openssl is not installed (Debian: etcd-server etcd-client openssl): skipped\n");
      return 77;
    }
  } catch (const std::exception &error) {
    std::fprintf(stderr, "could not start etcd over TLS: %s\n", error.what());
    return 1;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_round_trip_over_tls),
      cmocka_unit_test(test_unverified_member_is_refused),
      cmocka_unit_test(test_missing_client_certificate_is_bounded),
      cmocka_unit_test(test_plain_http_to_a_tls_member_is_bounded),
      cmocka_unit_test(test_wrong_secret_over_tls),
  };
  int failed = cmocka_run_group_tests_name("membership store on etcd over TLS", tests, nullptr, nullptr);
  backend.reset();
  return failed == 0 ? 0 : 1;
}
