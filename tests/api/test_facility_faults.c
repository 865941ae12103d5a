/* XFFL_OPT_FACILITY_FAULTS, XFFL_OPT_FEDERATION_QUORUM and the federation attributes (XFFL_ATTR_FEDERATION_EPOCH,
 * _ROUND, XFFL_ATTR_LIVE_FACILITIES) through the public API in single-world mode: defaults, the environment,
 * values, read by set_global only, the quorum checked against the layout's facilities, the round counting the
 * completed averages of the layout, and in facility mode CONTINUE accepted by backend NONE (topology only:
 * it takes no lease and connects to nothing). Facility mode with averages: tests/facilities (continue). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api_support.h"
#include "xffl_test.h"

static void expect_create_refused(const char *variable, const char *value) {
  setenv(variable, value, 1);
  xffl_state_t *st = NULL;
  assert_xffl_status(xffl_state_create(&st), XFFL_EINVAL);
  api_expect_message_contains(variable, "malformed facility-faults variable");
  unsetenv(variable);
}

static void test_defaults_and_environment(void **state) {
  (void)state;
  unsetenv("XFFL_FACILITY_FAULTS");
  unsetenv("XFFL_FEDERATION_QUORUM");
  assert_int_equal(api_option_of_new_state(XFFL_OPT_FACILITY_FAULTS), XFFL_FACILITY_FAULTS_FAIL);
  assert_int_equal(api_option_of_new_state(XFFL_OPT_FEDERATION_QUORUM), 0);
  setenv("XFFL_FACILITY_FAULTS", "Continue", 1);
  assert_int_equal(api_option_of_new_state(XFFL_OPT_FACILITY_FAULTS), XFFL_FACILITY_FAULTS_CONTINUE);
  setenv("XFFL_FACILITY_FAULTS", "fail", 1);
  assert_int_equal(api_option_of_new_state(XFFL_OPT_FACILITY_FAULTS), XFFL_FACILITY_FAULTS_FAIL);
  setenv("XFFL_FEDERATION_QUORUM", "2", 1);
  assert_int_equal(api_option_of_new_state(XFFL_OPT_FEDERATION_QUORUM), 2);
  unsetenv("XFFL_FACILITY_FAULTS");
  unsetenv("XFFL_FEDERATION_QUORUM");
  expect_create_refused("XFFL_FACILITY_FAULTS", "ignore");
  expect_create_refused("XFFL_FEDERATION_QUORUM", "-1");
  expect_create_refused("XFFL_FEDERATION_QUORUM", "two");
}

static void test_values_before_set_global(void **state) {
  (void)state;
  xffl_state_t *st = NULL;
  assert_xffl_ok(xffl_state_create(&st));
  int value = -1;
  assert_xffl_ok(xffl_set_option(st, XFFL_OPT_FACILITY_FAULTS, XFFL_FACILITY_FAULTS_CONTINUE));
  assert_xffl_ok(xffl_get_option(st, XFFL_OPT_FACILITY_FAULTS, &value));
  assert_int_equal(value, XFFL_FACILITY_FAULTS_CONTINUE);
  const int bad_faults[] = {-1, 2};
  for (size_t i = 0; i < sizeof bad_faults / sizeof bad_faults[0]; ++i) {
    assert_xffl_status(xffl_set_option(st, XFFL_OPT_FACILITY_FAULTS, bad_faults[i]), XFFL_EINVAL);
    api_expect_message_contains("facility faults", "bad facility-faults value");
  }
  assert_xffl_status(xffl_set_option(st, XFFL_OPT_FEDERATION_QUORUM, -1), XFFL_EINVAL);
  api_expect_message_contains("federation quorum -1", "negative quorum");
  assert_xffl_ok(xffl_set_option(st, XFFL_OPT_FEDERATION_QUORUM, 3));
  assert_xffl_ok(xffl_get_option(st, XFFL_OPT_FEDERATION_QUORUM, &value));
  assert_int_equal(value, 3);
  xffl_state_destroy(st);

  st = api_global_state(2, 1);
  assert_xffl_status(xffl_set_option(st, XFFL_OPT_FACILITY_FAULTS, 1), XFFL_ESTATE);
  assert_xffl_status(xffl_set_option(st, XFFL_OPT_FEDERATION_QUORUM, 1), XFFL_ESTATE);
  xffl_state_destroy(st);
}

/* CONTINUE in single-world mode is accepted and changes nothing; a quorum above the layout's facilities is
 * refused by xffl_federated_scaling, naming both. */
static void test_quorum_against_the_layout(void **state) {
  (void)state;
  xffl_state_t *st = NULL;
  assert_xffl_ok(xffl_state_create(&st));
  assert_xffl_ok(xffl_set_option(st, XFFL_OPT_FACILITY_FAULTS, XFFL_FACILITY_FAULTS_CONTINUE));
  assert_xffl_ok(xffl_set_option(st, XFFL_OPT_FEDERATION_QUORUM, 3));
  assert_xffl_ok(xffl_set_global(st, XFFL_BACKEND_NONE, XFFL_DEVICE_CPU, API_MASTER_ADDR, API_MASTER_PORT, 0, 6));
  const int two[] = {3, 3};
  assert_xffl_status(xffl_federated_scaling(st, two, 2, 0), XFFL_EINVAL);
  api_expect_message_contains("XFFL_OPT_FEDERATION_QUORUM 3 exceeds the 2 facilities", "quorum above G");
  const int three[] = {2, 2, 2};
  assert_xffl_ok(xffl_federated_scaling(st, three, 3, 0));
  api_expect_ints(st, XFFL_ATTR_LIVE_FACILITIES, "0,1,2", "live facilities of three groups");
  xffl_state_destroy(st);
}

static void test_attributes(void **state) {
  (void)state;
  xffl_state_t *st = api_global_state(1, 0);
  int value = -1;
  assert_xffl_status(xffl_get_int(st, XFFL_ATTR_FEDERATION_EPOCH, &value), XFFL_ENOTSET);
  api_expect_message_contains("federation_epoch is not set", "epoch without federated scaling");
  assert_xffl_status(xffl_get_int(st, XFFL_ATTR_FEDERATION_ROUND, &value), XFFL_ENOTSET);
  int live[4];
  size_t len = 0;
  assert_xffl_status(xffl_get_ints(st, XFFL_ATTR_LIVE_FACILITIES, live, 4, &len), XFFL_ENOTSET);

  const int one[] = {1};
  assert_xffl_ok(xffl_federated_scaling(st, one, 1, 0));
  api_expect_int(st, XFFL_ATTR_FEDERATION_EPOCH, 0, "epoch in single-world mode");
  api_expect_int(st, XFFL_ATTR_FEDERATION_ROUND, 0, "round before any average");
  api_expect_ints(st, XFFL_ATTR_LIVE_FACILITIES, "0", "live facilities");
  assert_xffl_status(xffl_get_int(st, XFFL_ATTR_LIVE_FACILITIES, &value), XFFL_EINVAL);
  api_expect_message_contains("live_facilities is a tuple", "live facilities is a tuple");

  float x[3] = {1.0f, 2.0f, 3.0f};
  assert_xffl_ok(xffl_federated_average(st, x, 3, XFFL_F32, NULL));
  api_expect_int(st, XFFL_ATTR_FEDERATION_ROUND, 1, "round after one average");
  void *bufs[] = {x};
  const size_t counts[] = {3};
  assert_xffl_ok(xffl_federated_average_many(st, bufs, counts, 1, XFFL_F32, NULL));
  xffl_request_t *req = NULL;
  assert_xffl_ok(xffl_federated_average_start(st, x, 3, XFFL_F32, NULL, &req));
  assert_xffl_ok(xffl_request_wait(req));
  xffl_request_free(req);
  api_expect_int(st, XFFL_ATTR_FEDERATION_ROUND, 3, "round after three averages");
  /* A failed average is no round. */
  assert_xffl_status(xffl_federated_average(st, NULL, 3, XFFL_F32, NULL), XFFL_EINVAL);
  api_expect_int(st, XFFL_ATTR_FEDERATION_ROUND, 3, "round after a refused average");

  /* The attributes are not DistributedState fields: describe() does not print them. */
  char text[8192];
  size_t text_len = 0;
  assert_xffl_ok(xffl_state_describe(st, XFFL_FORMAT_JSON, text, sizeof text, &text_len));
  assert_null(strstr(text, "epoch"));
  assert_null(strstr(text, "live"));

  /* A new layout starts again at round 0. */
  assert_xffl_ok(xffl_unset_federated_scaling(st));
  assert_xffl_status(xffl_get_int(st, XFFL_ATTR_FEDERATION_ROUND, &value), XFFL_ENOTSET);
  assert_xffl_ok(xffl_federated_scaling(st, one, 1, 0));
  api_expect_int(st, XFFL_ATTR_FEDERATION_ROUND, 0, "round of a new layout");
  xffl_state_destroy(st);
}

/* Facility mode: with backend NONE, CONTINUE connects to nothing (the federation endpoint below is never
 * reached, as nothing averages); a quorum above XFFL_FEDERATED's facilities is refused. */
static void test_facility_mode_refusals(void **state) {
  (void)state;
  setenv("XFFL_FACILITY", "0", 1);
  setenv("XFFL_FEDERATION", "xffl://127.0.0.1:9", 1);
  setenv("XFFL_FEDERATED", "1,1", 1);
  xffl_state_t *st = NULL;
  assert_xffl_ok(xffl_state_create(&st));
  assert_xffl_ok(xffl_set_option(st, XFFL_OPT_FACILITY_FAULTS, XFFL_FACILITY_FAULTS_CONTINUE));
  assert_xffl_ok(xffl_set_global(st, XFFL_BACKEND_NONE, XFFL_DEVICE_CPU, API_MASTER_ADDR, API_MASTER_PORT, 0, 1));
  api_expect_int(st, XFFL_ATTR_RANK, 0, "global rank of facility 0's job rank 0");
  xffl_state_destroy(st);

  assert_xffl_ok(xffl_state_create(&st));
  assert_xffl_ok(xffl_set_option(st, XFFL_OPT_FEDERATION_QUORUM, 3));
  assert_xffl_status(xffl_set_global(st, XFFL_BACKEND_NONE, XFFL_DEVICE_CPU, API_MASTER_ADDR, API_MASTER_PORT, 0, 1),
                     XFFL_EINVAL);
  api_expect_message_contains("XFFL_OPT_FEDERATION_QUORUM 3 exceeds the 2 facilities", "quorum above G");
  xffl_state_destroy(st);

  /* An etcds:// federation's files are read from the environment by xffl_set_global, and checked there. */
  const struct {
    const char *federation, *variable, *value, *message;
  } tls_cases[] = {
      {"etcd://127.0.0.1:9", "XFFL_FEDERATION_CA", "/proc/self/status", "does not use TLS: write etcds://"},
      {"etcds://127.0.0.1:9", "XFFL_FEDERATION_CA", "/nonexistent/ca.pem",
       "XFFL_FEDERATION_CA='/nonexistent/ca.pem' is not a file this process can read"},
      {"etcds://127.0.0.1:9", "XFFL_FEDERATION_CERT", "/proc/self/status",
       "XFFL_FEDERATION_CERT is set but XFFL_FEDERATION_KEY is not"},
  };
  for (size_t i = 0; i < sizeof tls_cases / sizeof tls_cases[0]; ++i) {
    setenv("XFFL_FEDERATION", tls_cases[i].federation, 1);
    setenv(tls_cases[i].variable, tls_cases[i].value, 1);
    assert_xffl_ok(xffl_state_create(&st));
    assert_xffl_status(xffl_set_global(st, XFFL_BACKEND_NONE, XFFL_DEVICE_CPU, API_MASTER_ADDR, API_MASTER_PORT, 0, 1),
                       XFFL_EINVAL);
    api_expect_message_contains(tls_cases[i].message, tls_cases[i].variable);
    xffl_state_destroy(st);
    unsetenv(tls_cases[i].variable);
  }
  setenv("XFFL_FEDERATION", "etcds://127.0.0.1:9", 1);
  setenv("XFFL_FEDERATION_CA", "/proc/self/status", 1);
  assert_xffl_ok(xffl_state_create(&st));
  assert_xffl_ok(xffl_set_global(st, XFFL_BACKEND_NONE, XFFL_DEVICE_CPU, API_MASTER_ADDR, API_MASTER_PORT, 0, 1));
  xffl_state_destroy(st);
  unsetenv("XFFL_FEDERATION_CA");
  unsetenv("XFFL_FACILITY");
  unsetenv("XFFL_FEDERATION");
  unsetenv("XFFL_FEDERATED");
}

/* Under CONTINUE the lease TTL must be shorter than the timeout (equal too is refused): xffl_set_global says
 * XFFL_EINVAL naming both variables and both values, before any rank waits (backend NONE included). FAIL takes
 * no lease: the same TTL is accepted. */
static void test_lease_ttl_not_below_the_timeout(void **state) {
  (void)state;
  setenv("XFFL_FACILITY", "0", 1);
  setenv("XFFL_FEDERATION", "xffl://127.0.0.1:9", 1);
  setenv("XFFL_FEDERATED", "1,1", 1);
  setenv("XFFL_FEDERATION_LEASE_TTL", "10", 1);
  const int timeouts[] = {10000, 4000};
  for (size_t i = 0; i < 2; ++i) {
    xffl_state_t *st = NULL;
    assert_xffl_ok(xffl_state_create(&st));
    assert_xffl_ok(xffl_set_option(st, XFFL_OPT_FACILITY_FAULTS, XFFL_FACILITY_FAULTS_CONTINUE));
    assert_xffl_ok(xffl_set_option(st, XFFL_OPT_TIMEOUT_MS, timeouts[i]));
    assert_xffl_status(xffl_set_global(st, XFFL_BACKEND_NONE, XFFL_DEVICE_CPU, API_MASTER_ADDR, API_MASTER_PORT, 0, 1),
                       XFFL_EINVAL);
    api_expect_message_contains("XFFL_FEDERATION_LEASE_TTL = 10 s (as set) is not below XFFL_TIMEOUT", "TTL >= timeout");
    api_expect_message_contains(i == 0 ? "= 10000 ms" : "= 4000 ms", "the timeout's value");
    xffl_state_destroy(st);
  }
  xffl_state_t *st = NULL;
  assert_xffl_ok(xffl_state_create(&st));
  assert_xffl_ok(xffl_set_option(st, XFFL_OPT_FACILITY_FAULTS, XFFL_FACILITY_FAULTS_CONTINUE));
  assert_xffl_ok(xffl_set_option(st, XFFL_OPT_TIMEOUT_MS, 10001));
  assert_xffl_ok(xffl_set_global(st, XFFL_BACKEND_NONE, XFFL_DEVICE_CPU, API_MASTER_ADDR, API_MASTER_PORT, 0, 1));
  xffl_state_destroy(st);
  assert_xffl_ok(xffl_state_create(&st));
  assert_xffl_ok(xffl_set_option(st, XFFL_OPT_TIMEOUT_MS, 5000));
  assert_xffl_ok(xffl_set_global(st, XFFL_BACKEND_NONE, XFFL_DEVICE_CPU, API_MASTER_ADDR, API_MASTER_PORT, 0, 1));
  xffl_state_destroy(st);
  unsetenv("XFFL_FEDERATION_LEASE_TTL");
  unsetenv("XFFL_FACILITY");
  unsetenv("XFFL_FEDERATION");
  unsetenv("XFFL_FEDERATED");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_defaults_and_environment),
      cmocka_unit_test(test_values_before_set_global),
      cmocka_unit_test(test_quorum_against_the_layout),
      cmocka_unit_test(test_attributes),
      cmocka_unit_test(test_facility_mode_refusals),
      cmocka_unit_test(test_lease_ttl_not_below_the_timeout),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
