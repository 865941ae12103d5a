/* String options through the API (xffl_set_option_string / xffl_get_option_string), the int and string
 * option keys kept apart, the "before xffl_set_global" rule, the token never echoed, and the status of a
 * malformed environment value at xffl_state_create. Through libxffl.so. This program changes its own
 * environment (single-threaded, before any state reads it). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_support.h"
#include "xffl_test.h"

#define SECRET "tok-5ecret-DO-NOT-PRINT"

static void expect_no_secret(const char *ctx) {
  if (strstr(xffl_last_error_message(), SECRET))
    fail_msg("%s: the message shows the auth token: %s", ctx, xffl_last_error_message());
}

static void test_job_id_round_trip(void **state) {
  (void)state;
  unsetenv("XFFL_JOB_ID");
  unsetenv("TORCHELASTIC_RUN_ID");
  unsetenv("SLURM_JOB_ID");
  xffl_state_t *st = NULL;
  assert_xffl_ok(xffl_state_create(&st));
  char buf[300];
  size_t len = 0;
  assert_xffl_ok(xffl_get_option_string(st, XFFL_OPT_JOB_ID, buf, sizeof buf, &len));
  assert_string_equal(buf, "xffl"); /* the default */
  assert_int_equal(len, 4);
  assert_xffl_ok(xffl_set_option_string(st, XFFL_OPT_JOB_ID, "run-2026-12-01"));
  assert_xffl_ok(xffl_get_option_string(st, XFFL_OPT_JOB_ID, buf, sizeof buf, &len));
  assert_string_equal(buf, "run-2026-12-01");
  assert_int_equal(len, 14);

  /* EBUFSIZE as xffl_get_master_addr: len written, buffer untouched, room needed for the NUL. */
  char small[14];
  memset(small, 'x', sizeof small);
  len = 0;
  assert_xffl_status(xffl_get_option_string(st, XFFL_OPT_JOB_ID, small, sizeof small, &len), XFFL_EBUFSIZE);
  assert_int_equal(len, 14);
  for (size_t i = 0; i < sizeof small; ++i) assert_int_equal(small[i], 'x');
  len = 0;
  assert_xffl_status(xffl_get_option_string(st, XFFL_OPT_JOB_ID, NULL, 0, &len), XFFL_EBUFSIZE);
  assert_int_equal(len, 14);
  assert_xffl_status(xffl_get_option_string(st, XFFL_OPT_JOB_ID, NULL, 4, &len), XFFL_EINVAL);
  api_expect_message_contains("buf is NULL", "NULL buf");

  /* Invalid job ids change nothing: empty, longer than 256 bytes. 256 bytes is accepted. */
  assert_xffl_status(xffl_set_option_string(st, XFFL_OPT_JOB_ID, ""), XFFL_EINVAL);
  api_expect_message_contains("job id is empty", "empty job id");
  char longest[258];
  memset(longest, 'j', 257);
  longest[257] = '\0';
  assert_xffl_status(xffl_set_option_string(st, XFFL_OPT_JOB_ID, longest), XFFL_EINVAL);
  api_expect_message_contains("job id of 257 bytes exceeds the limit of 256", "long job id");
  assert_xffl_ok(xffl_get_option_string(st, XFFL_OPT_JOB_ID, buf, sizeof buf, &len));
  assert_string_equal(buf, "run-2026-12-01");
  longest[256] = '\0';
  assert_xffl_ok(xffl_set_option_string(st, XFFL_OPT_JOB_ID, longest));
  assert_xffl_ok(xffl_get_option_string(st, XFFL_OPT_JOB_ID, buf, sizeof buf, &len));
  assert_int_equal(len, 256);
  xffl_state_destroy(st);

  /* The API's value wins over the environment's, which gives the default. */
  setenv("XFFL_JOB_ID", "from-env", 1);
  assert_xffl_ok(xffl_state_create(&st));
  assert_xffl_ok(xffl_get_option_string(st, XFFL_OPT_JOB_ID, buf, sizeof buf, &len));
  assert_string_equal(buf, "from-env");
  assert_xffl_ok(xffl_set_option_string(st, XFFL_OPT_JOB_ID, "from-api"));
  assert_xffl_ok(xffl_get_option_string(st, XFFL_OPT_JOB_ID, buf, sizeof buf, &len));
  assert_string_equal(buf, "from-api");
  xffl_state_destroy(st);
  unsetenv("XFFL_JOB_ID");
}

/* The token is write-only, and no message carries it, even for a refused call. */
static void test_auth_token_write_only(void **state) {
  (void)state;
  xffl_state_t *st = NULL;
  assert_xffl_ok(xffl_state_create(&st));
  assert_xffl_ok(xffl_set_option_string(st, XFFL_OPT_AUTH_TOKEN, SECRET));
  assert_xffl_ok(xffl_set_option_string(st, XFFL_OPT_AUTH_TOKEN, "")); /* none */
  assert_xffl_ok(xffl_set_option_string(st, XFFL_OPT_AUTH_TOKEN, SECRET));
  char buf[128];
  memset(buf, 'x', sizeof buf);
  size_t len = 99;
  assert_xffl_status(xffl_get_option_string(st, XFFL_OPT_AUTH_TOKEN, buf, sizeof buf, &len), XFFL_EINVAL);
  api_expect_message_contains("XFFL_OPT_AUTH_TOKEN is write-only", "get token");
  expect_no_secret("get token");
  assert_int_equal(len, 99);
  assert_int_equal(buf[0], 'x');

  /* describe never shows it either. */
  char text[8192];
  assert_xffl_ok(xffl_state_describe(st, XFFL_FORMAT_TEXT, text, sizeof text, &len));
  assert_null(strstr(text, SECRET));
  assert_xffl_ok(xffl_state_describe(st, XFFL_FORMAT_JSON, text, sizeof text, &len));
  assert_null(strstr(text, SECRET));

  /* After set_global: ESTATE with the reason, the token not echoed. */
  assert_xffl_ok(xffl_set_global(st, XFFL_BACKEND_NONE, XFFL_DEVICE_CPU, API_MASTER_ADDR, API_MASTER_PORT, 0, 1));
  assert_xffl_status(xffl_set_option_string(st, XFFL_OPT_AUTH_TOKEN, SECRET "2"), XFFL_ESTATE);
  api_expect_message_contains("XFFL_OPT_AUTH_TOKEN is read by xffl_set_global", "token after set_global");
  expect_no_secret("token after set_global");
  assert_xffl_status(xffl_set_option_string(st, XFFL_OPT_JOB_ID, "late"), XFFL_ESTATE);
  api_expect_message_contains("XFFL_OPT_JOB_ID is read by xffl_set_global", "job id after set_global");
  char id[64];
  assert_xffl_ok(xffl_get_option_string(st, XFFL_OPT_JOB_ID, id, sizeof id, &len)); /* reading stays allowed */
  assert_string_not_equal(id, "late");
  xffl_state_destroy(st);
}

/* Integer keys to the string calls and string keys to the integer calls are EINVAL, naming the other call. */
static void test_keys_kept_apart(void **state) {
  (void)state;
  xffl_state_t *st = NULL;
  assert_xffl_ok(xffl_state_create(&st));
  int value = -5;
  assert_xffl_status(xffl_set_option(st, XFFL_OPT_AUTH_TOKEN, 1), XFFL_EINVAL);
  api_expect_message_contains("XFFL_OPT_AUTH_TOKEN is a string option: set it with xffl_set_option_string", "int set");
  assert_xffl_status(xffl_set_option(st, XFFL_OPT_JOB_ID, 1), XFFL_EINVAL);
  api_expect_message_contains("XFFL_OPT_JOB_ID is a string option", "int set job id");
  assert_xffl_status(xffl_get_option(st, XFFL_OPT_JOB_ID, &value), XFFL_EINVAL);
  api_expect_message_contains("read it with xffl_get_option_string", "int get");
  assert_int_equal(value, -5);
  assert_xffl_status(xffl_get_option(st, XFFL_OPT_AUTH_TOKEN, &value), XFFL_EINVAL);
  assert_int_equal(value, -5);

  const xffl_option_t int_keys[] = {XFFL_OPT_TIMEOUT_MS, XFFL_OPT_FEDERATED_STRATEGY, XFFL_OPT_LOG_LEVEL,
                                    XFFL_OPT_CROSS_FACILITY_BACKEND};
  char buf[64];
  size_t len = 99;
  for (size_t i = 0; i < 4; ++i) {
    int before = 0, after = 0;
    assert_xffl_ok(xffl_get_option(st, int_keys[i], &before));
    assert_xffl_status(xffl_set_option_string(st, int_keys[i], "1"), XFFL_EINVAL);
    api_expect_message_contains("is an integer option: set it with xffl_set_option", "string set");
    assert_xffl_ok(xffl_get_option(st, int_keys[i], &after));
    assert_int_equal(before, after);
    assert_xffl_status(xffl_get_option_string(st, int_keys[i], buf, sizeof buf, &len), XFFL_EINVAL);
    api_expect_message_contains("is an integer option: read it with xffl_get_option", "string get");
    assert_int_equal(len, 99);
  }
  const int unknown[] = {64, 1000, -1};  /* beyond the options (8 and 9 are the wire format's) */
  for (size_t i = 0; i < 3; ++i) {
    char needle[32];
    snprintf(needle, sizeof needle, "unknown option %d", unknown[i]);
    assert_xffl_status(xffl_set_option_string(st, (xffl_option_t)unknown[i], "x"), XFFL_EINVAL);
    api_expect_message_contains(needle, "unknown set");
    assert_xffl_status(xffl_get_option_string(st, (xffl_option_t)unknown[i], buf, sizeof buf, &len), XFFL_EINVAL);
    api_expect_message_contains(needle, "unknown get");
  }
  assert_xffl_status(xffl_set_option_string(st, XFFL_OPT_JOB_ID, NULL), XFFL_EINVAL);
  api_expect_message_contains("text is NULL", "NULL text");
  assert_xffl_status(xffl_set_option_string(NULL, XFFL_OPT_JOB_ID, "x"), XFFL_EINVAL);
  api_expect_message_contains("st is NULL", "NULL st");
  assert_xffl_status(xffl_get_option_string(NULL, XFFL_OPT_JOB_ID, buf, sizeof buf, &len), XFFL_EINVAL);
  assert_xffl_status(xffl_get_option_string(st, XFFL_OPT_JOB_ID, buf, sizeof buf, NULL), XFFL_EINVAL);
  api_expect_message_contains("len is NULL", "NULL len");
  xffl_state_destroy(st);
}

/* CROSS_FACILITY_BACKEND only before set_global; TIMEOUT, LOG_LEVEL, STRATEGY at any time. */
static void test_option_timing(void **state) {
  (void)state;
  xffl_state_t *st = api_global_state(4, 0);
  assert_xffl_ok(xffl_set_option(st, XFFL_OPT_TIMEOUT_MS, 1234));
  assert_xffl_ok(xffl_set_option(st, XFFL_OPT_LOG_LEVEL, XFFL_LOG_ERROR));
  assert_xffl_ok(xffl_set_option(st, XFFL_OPT_FEDERATED_STRATEGY, XFFL_FEDAVG_FLAT));
  assert_xffl_status(xffl_set_option(st, XFFL_OPT_CROSS_FACILITY_BACKEND, XFFL_BACKEND_UCX), XFFL_ESTATE);
  api_expect_message_contains("set XFFL_OPT_CROSS_FACILITY_BACKEND before it", "cross after set_global");
  xffl_state_destroy(st);
}

/* A malformed environment value: XFFL_EINVAL at create, naming the variable and the value; no state. */
static void test_malformed_environment(void **state) {
  (void)state;
  const struct {
    const char *variable, *value, *needle;
  } cases[] = {
      {"XFFL_TIMEOUT", "soon", "XFFL_TIMEOUT='soon' is not a number of seconds"},
      {"XFFL_TIMEOUT", "-3", "XFFL_TIMEOUT='-3'"},
      {"XFFL_LOG_LEVEL", "loud", "XFFL_LOG_LEVEL='loud' is not one of error, warn, info, debug"},
      {"XFFL_CROSS_FACILITY_BACKEND", "mpi", "XFFL_CROSS_FACILITY_BACKEND='mpi' is not one of none, ucx, wan"},
  };
  /* A complete one-rank launcher environment, so that from_env gets as far as the options. */
  setenv("RANK", "0", 1);
  setenv("WORLD_SIZE", "1", 1);
  setenv("MASTER_ADDR", "127.0.0.1", 1);
  setenv("MASTER_PORT", "29500", 1);
  setenv("XFFL_BACKEND", "none", 1);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    setenv(cases[i].variable, cases[i].value, 1);
    xffl_state_t *st = (xffl_state_t *)&cases; /* a sentinel: must stay as it is */
    assert_xffl_status(xffl_state_create(&st), XFFL_EINVAL);
    api_expect_message_contains(cases[i].needle, cases[i].variable);
    assert_ptr_equal(st, (xffl_state_t *)&cases);
    st = (xffl_state_t *)&cases;
    assert_xffl_status(xffl_state_from_env(&st), XFFL_EINVAL);
    api_expect_message_contains(cases[i].needle, cases[i].variable);
    assert_ptr_equal(st, (xffl_state_t *)&cases);
    unsetenv(cases[i].variable);
  }
  /* An empty variable counts as unset. */
  setenv("XFFL_TIMEOUT", "", 1);
  xffl_state_t *st = NULL;
  assert_xffl_ok(xffl_state_create(&st));
  int timeout = 0;
  assert_xffl_ok(xffl_get_option(st, XFFL_OPT_TIMEOUT_MS, &timeout));
  assert_int_equal(timeout, 300000);
  xffl_state_destroy(st);
  unsetenv("XFFL_TIMEOUT");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_job_id_round_trip),   cmocka_unit_test(test_auth_token_write_only),
      cmocka_unit_test(test_keys_kept_apart),     cmocka_unit_test(test_option_timing),
      cmocka_unit_test(test_malformed_environment),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
