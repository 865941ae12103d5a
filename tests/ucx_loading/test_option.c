/* XFFL_OPT_UCX_PROCESS_SETTINGS through the public API: default, values, environment, and when it may
 * change (label api). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "xffl_test.h"

static int option_of_new_state(void) {
  xffl_state_t *st = NULL;
  assert_xffl_ok(xffl_state_create(&st));
  int value = -1;
  assert_xffl_ok(xffl_get_option(st, XFFL_OPT_UCX_PROCESS_SETTINGS, &value));
  xffl_state_destroy(st);
  return value;
}

static void test_default_is_off(void **state) {
  (void)state;
  unsetenv("XFFL_UCX_PROCESS_SETTINGS");
  assert_int_equal(option_of_new_state(), 0);
}

static void test_values(void **state) {
  (void)state;
  unsetenv("XFFL_UCX_PROCESS_SETTINGS");
  xffl_state_t *st = NULL;
  int value = -1;
  assert_xffl_ok(xffl_state_create(&st));
  assert_xffl_ok(xffl_set_option(st, XFFL_OPT_UCX_PROCESS_SETTINGS, 1));
  assert_xffl_ok(xffl_get_option(st, XFFL_OPT_UCX_PROCESS_SETTINGS, &value));
  assert_int_equal(value, 1);
  const int bad[] = {2, -1, 99};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    assert_xffl_status(xffl_set_option(st, XFFL_OPT_UCX_PROCESS_SETTINGS, bad[i]), XFFL_EINVAL);
    char number[16];
    snprintf(number, sizeof number, "%d", bad[i]);
    if (!strstr(xffl_last_error_message(), number))
      fail_msg("refusing %d: message '%s' does not name the value", bad[i], xffl_last_error_message());
    assert_xffl_ok(xffl_get_option(st, XFFL_OPT_UCX_PROCESS_SETTINGS, &value));
    assert_int_equal(value, 1); /* unchanged by the refused value */
  }
  assert_xffl_ok(xffl_set_option(st, XFFL_OPT_UCX_PROCESS_SETTINGS, 0));
  /* Taken by xffl_set_global: the same value is still accepted after it, another one is ESTATE. */
  assert_xffl_ok(xffl_set_global(st, XFFL_BACKEND_NONE, XFFL_DEVICE_CPU, "127.0.0.1", 29500, 0, 2));
  assert_xffl_ok(xffl_set_option(st, XFFL_OPT_UCX_PROCESS_SETTINGS, 0));
  assert_xffl_status(xffl_set_option(st, XFFL_OPT_UCX_PROCESS_SETTINGS, 1), XFFL_ESTATE);
  if (!strstr(xffl_last_error_message(), "before it"))
    fail_msg("message '%s' does not say when to set it", xffl_last_error_message());
  assert_xffl_ok(xffl_get_option(st, XFFL_OPT_UCX_PROCESS_SETTINGS, &value));
  assert_int_equal(value, 0);
  xffl_state_destroy(st);
}

static void test_environment(void **state) {
  (void)state;
  setenv("XFFL_UCX_PROCESS_SETTINGS", "1", 1);
  assert_int_equal(option_of_new_state(), 1);
  setenv("XFFL_UCX_PROCESS_SETTINGS", "0", 1);
  assert_int_equal(option_of_new_state(), 0);
  const char *bad[] = {"yes", "2", "on", " 1"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    setenv("XFFL_UCX_PROCESS_SETTINGS", bad[i], 1);
    xffl_state_t *st = (xffl_state_t *)(uintptr_t)0x42;
    assert_xffl_status(xffl_state_create(&st), XFFL_EINVAL);
    assert_ptr_equal(st, (xffl_state_t *)(uintptr_t)0x42);
    if (!strstr(xffl_last_error_message(), "XFFL_UCX_PROCESS_SETTINGS"))
      fail_msg("'%s': message '%s' does not name the variable", bad[i], xffl_last_error_message());
  }
  unsetenv("XFFL_UCX_PROCESS_SETTINGS");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_default_is_off),
      cmocka_unit_test(test_values),
      cmocka_unit_test(test_environment),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
