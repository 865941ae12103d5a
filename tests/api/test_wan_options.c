/* XFFL_OPT_WAN_STREAMS and XFFL_OPT_WAN_ENCRYPTION through the public API: defaults, the environment,
 * values, read by set_global only; XFFL_BACKEND_WAN accepted as the cross-facility backend and refused as
 * the main one. The transport itself is tested in unit_comm_test_wan_links and the multiproc and netns
 * tests. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>

#include <cmocka.h>

#include "api_support.h"
#include "xffl_test.h"

static void expect_create_refused(const char *variable, const char *value) {
  setenv(variable, value, 1);
  xffl_state_t *st = NULL;
  assert_xffl_status(xffl_state_create(&st), XFFL_EINVAL);
  api_expect_message_contains(variable, "malformed wan variable");
  unsetenv(variable);
}

static void test_defaults_and_environment(void **state) {
  (void)state;
  unsetenv("XFFL_WAN_STREAMS");
  unsetenv("XFFL_WAN_ENCRYPTION");
  assert_int_equal(api_option_of_new_state(XFFL_OPT_WAN_STREAMS), 4);
  assert_int_equal(api_option_of_new_state(XFFL_OPT_WAN_ENCRYPTION), XFFL_WAN_ENCRYPTION_NONE);
  setenv("XFFL_WAN_STREAMS", "16", 1);
  assert_int_equal(api_option_of_new_state(XFFL_OPT_WAN_STREAMS), 16);
  setenv("XFFL_WAN_ENCRYPTION", "ChaCha20-Poly1305", 1);
  assert_int_equal(api_option_of_new_state(XFFL_OPT_WAN_ENCRYPTION), XFFL_WAN_ENCRYPTION_CHACHA20_POLY1305);
  setenv("XFFL_WAN_ENCRYPTION", "aes-256-gcm", 1);
  assert_int_equal(api_option_of_new_state(XFFL_OPT_WAN_ENCRYPTION), XFFL_WAN_ENCRYPTION_AES_256_GCM);
  unsetenv("XFFL_WAN_STREAMS");
  unsetenv("XFFL_WAN_ENCRYPTION");
  expect_create_refused("XFFL_WAN_STREAMS", "0");
  expect_create_refused("XFFL_WAN_STREAMS", "65");
  expect_create_refused("XFFL_WAN_ENCRYPTION", "des");
  setenv("XFFL_CROSS_FACILITY_BACKEND", "wan", 1);
  assert_int_equal(api_option_of_new_state(XFFL_OPT_CROSS_FACILITY_BACKEND), XFFL_BACKEND_WAN);
  unsetenv("XFFL_CROSS_FACILITY_BACKEND");
}

static void test_values_before_set_global(void **state) {
  (void)state;
  xffl_state_t *st = NULL;
  assert_xffl_ok(xffl_state_create(&st));
  int value = -1;
  assert_xffl_ok(xffl_set_option(st, XFFL_OPT_WAN_STREAMS, 64));
  assert_xffl_ok(xffl_get_option(st, XFFL_OPT_WAN_STREAMS, &value));
  assert_int_equal(value, 64);
  const int bad_streams[] = {0, -1, 65};
  for (size_t i = 0; i < sizeof bad_streams / sizeof bad_streams[0]; ++i) {
    assert_xffl_status(xffl_set_option(st, XFFL_OPT_WAN_STREAMS, bad_streams[i]), XFFL_EINVAL);
    api_expect_message_contains("wan streams", "bad stream count");
  }
  const int bad_ciphers[] = {-1, 3};
  for (size_t i = 0; i < sizeof bad_ciphers / sizeof bad_ciphers[0]; ++i) {
    assert_xffl_status(xffl_set_option(st, XFFL_OPT_WAN_ENCRYPTION, bad_ciphers[i]), XFFL_EINVAL);
    api_expect_message_contains("wan encryption", "bad cipher");
  }
  assert_xffl_ok(xffl_set_option(st, XFFL_OPT_WAN_ENCRYPTION, XFFL_WAN_ENCRYPTION_CHACHA20_POLY1305));
  assert_xffl_ok(xffl_set_option(st, XFFL_OPT_CROSS_FACILITY_BACKEND, XFFL_BACKEND_WAN));
  assert_xffl_ok(xffl_get_option(st, XFFL_OPT_CROSS_FACILITY_BACKEND, &value));
  assert_int_equal(value, XFFL_BACKEND_WAN);
  xffl_state_destroy(st);

  st = api_global_state(2, 1); /* backend NONE: takes no crossing backend, the options are only read */
  assert_xffl_status(xffl_set_option(st, XFFL_OPT_WAN_STREAMS, 2), XFFL_ESTATE);
  assert_xffl_status(xffl_set_option(st, XFFL_OPT_WAN_ENCRYPTION, 1), XFFL_ESTATE);
  xffl_state_destroy(st);
}

static void test_not_a_main_backend(void **state) {
  (void)state;
  xffl_state_t *st = NULL;
  assert_xffl_ok(xffl_state_create(&st));
  assert_xffl_status(xffl_set_global(st, XFFL_BACKEND_WAN, XFFL_DEVICE_CPU, API_MASTER_ADDR, API_MASTER_PORT, 0, 1),
                     XFFL_EUNSUPPORTED);
  api_expect_message_contains("XFFL_OPT_CROSS_FACILITY_BACKEND", "wan as the main backend");
  xffl_state_destroy(st);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_defaults_and_environment),
      cmocka_unit_test(test_values_before_set_global),
      cmocka_unit_test(test_not_a_main_backend),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
