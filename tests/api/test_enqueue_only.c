/* XFFL_OPT_ENQUEUE_ONLY through the public API: off by default (NCCL calls wait on the host), values,
 * the environment, and that it may change at any time, also after set_global. Its effect on the NCCL
 * backend is tested with the fake NCCL (unit_nccl_test_nccl_watchdog). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>

#include <cmocka.h>

#include "api_support.h"
#include "xffl_test.h"

static void test_default_waits_on_the_host(void **state) {
  (void)state;
  unsetenv("XFFL_ENQUEUE_ONLY");
  assert_int_equal(api_option_of_new_state(XFFL_OPT_ENQUEUE_ONLY), 0);
}

static void test_environment(void **state) {
  (void)state;
  setenv("XFFL_ENQUEUE_ONLY", "1", 1);
  assert_int_equal(api_option_of_new_state(XFFL_OPT_ENQUEUE_ONLY), 1);
  setenv("XFFL_ENQUEUE_ONLY", "yes", 1);
  xffl_state_t *st = NULL;
  assert_xffl_status(xffl_state_create(&st), XFFL_EINVAL);
  api_expect_message_contains("XFFL_ENQUEUE_ONLY='yes'", "malformed environment value");
  unsetenv("XFFL_ENQUEUE_ONLY");
}

static void test_values_at_any_time(void **state) {
  (void)state;
  unsetenv("XFFL_ENQUEUE_ONLY");
  xffl_state_t *st = api_global_state(2, 1);
  int value = -1;
  assert_xffl_ok(xffl_set_option(st, XFFL_OPT_ENQUEUE_ONLY, 1)); /* after set_global: allowed */
  assert_xffl_ok(xffl_get_option(st, XFFL_OPT_ENQUEUE_ONLY, &value));
  assert_int_equal(value, 1);
  const int bad[] = {2, -1};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    assert_xffl_status(xffl_set_option(st, XFFL_OPT_ENQUEUE_ONLY, bad[i]), XFFL_EINVAL);
    api_expect_message_contains("enqueue-only", "bad value");
  }
  assert_xffl_ok(xffl_get_option(st, XFFL_OPT_ENQUEUE_ONLY, &value));
  assert_int_equal(value, 1); /* unchanged by the refused values */
  xffl_state_destroy(st);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_default_waits_on_the_host),
      cmocka_unit_test(test_environment),
      cmocka_unit_test(test_values_at_any_time),
  };
  return cmocka_run_group_tests_name("api.enqueue_only", tests, NULL, NULL);
}
