/* XFFL_OPT_WIRE_FORMAT and XFFL_OPT_ERROR_FEEDBACK through the public API: defaults (F32, off), the
 * environment (XFFL_WIRE_FORMAT, XFFL_ERROR_FEEDBACK), values refused naming them, settable at any time,
 * and backend NONE with one federated group: no WAN hop, so the average stays exact whatever the
 * format. The compressed hop itself is tested on several processes (multiproc.wire_formats.*). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api_support.h"
#include "xffl_test.h"

static void options_of_new_state(int *format, int *feedback) {
  xffl_state_t *st = NULL;
  assert_xffl_ok(xffl_state_create(&st));
  assert_xffl_ok(xffl_get_option(st, XFFL_OPT_WIRE_FORMAT, format));
  assert_xffl_ok(xffl_get_option(st, XFFL_OPT_ERROR_FEEDBACK, feedback));
  xffl_state_destroy(st);
}

static void test_defaults(void **state) {
  (void)state;
  unsetenv("XFFL_WIRE_FORMAT");
  unsetenv("XFFL_ERROR_FEEDBACK");
  int format = -1, feedback = -1;
  options_of_new_state(&format, &feedback);
  assert_int_equal(format, XFFL_WIRE_F32);
  assert_int_equal(feedback, 0);
}

static void test_environment(void **state) {
  (void)state;
  const struct {
    const char *text;
    int format;
  } names[] = {{"f32", XFFL_WIRE_F32},
               {"bf16", XFFL_WIRE_BF16},
               {"F16", XFFL_WIRE_F16},
               {"int8_block", XFFL_WIRE_INT8_BLOCK},
               {"int4_block", XFFL_WIRE_INT4_BLOCK}};
  setenv("XFFL_ERROR_FEEDBACK", "1", 1);
  for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i) {
    setenv("XFFL_WIRE_FORMAT", names[i].text, 1);
    int format = -1, feedback = -1;
    options_of_new_state(&format, &feedback);
    assert_int_equal(format, names[i].format);
    assert_int_equal(feedback, 1);
  }
  xffl_state_t *st = NULL;
  setenv("XFFL_WIRE_FORMAT", "int2", 1);
  assert_xffl_status(xffl_state_create(&st), XFFL_EINVAL);
  api_expect_message_contains("XFFL_WIRE_FORMAT='int2'", "malformed format");
  setenv("XFFL_WIRE_FORMAT", "f32", 1);
  setenv("XFFL_ERROR_FEEDBACK", "on", 1);
  assert_xffl_status(xffl_state_create(&st), XFFL_EINVAL);
  api_expect_message_contains("XFFL_ERROR_FEEDBACK='on'", "malformed feedback");
  unsetenv("XFFL_WIRE_FORMAT");
  unsetenv("XFFL_ERROR_FEEDBACK");
}

static void test_values_at_any_time(void **state) {
  (void)state;
  xffl_state_t *st = api_global_state(2, 1);
  int value = -1;
  assert_xffl_ok(xffl_set_option(st, XFFL_OPT_WIRE_FORMAT, XFFL_WIRE_INT8_BLOCK)); /* after set_global */
  assert_xffl_ok(xffl_set_option(st, XFFL_OPT_ERROR_FEEDBACK, 1));
  const int bad_formats[] = {5, -1};
  for (size_t i = 0; i < 2; ++i) {
    assert_xffl_status(xffl_set_option(st, XFFL_OPT_WIRE_FORMAT, bad_formats[i]), XFFL_EINVAL);
    api_expect_message_contains("wire format", "bad format");
  }
  assert_xffl_status(xffl_set_option(st, XFFL_OPT_ERROR_FEEDBACK, 2), XFFL_EINVAL);
  api_expect_message_contains("error feedback 2 is not 0 (off) or 1 (on)", "bad feedback");
  assert_xffl_ok(xffl_get_option(st, XFFL_OPT_WIRE_FORMAT, &value));
  assert_int_equal(value, XFFL_WIRE_INT8_BLOCK); /* unchanged by the refused values */
  assert_xffl_ok(xffl_get_option(st, XFFL_OPT_ERROR_FEEDBACK, &value));
  assert_int_equal(value, 1);
  xffl_state_destroy(st);
}

/* One federated group has no WAN hop: the average is the buffer itself, bit for bit, in every format,
 * with and without error feedback, for average and average_many. */
static void test_one_group_stays_exact(void **state) {
  (void)state;
  xffl_state_t *st = api_global_state(1, 0);
  const int sizes[] = {1};
  assert_xffl_ok(xffl_federated_scaling(st, sizes, 1, 0));
  float x[300], copy[300];
  for (int i = 0; i < 300; ++i) x[i] = copy[i] = 0.1234567f * (float)(i - 150);
  void *bufs[1] = {x};
  size_t counts[1] = {300};
  for (int format = XFFL_WIRE_F32; format <= XFFL_WIRE_INT4_BLOCK; ++format)
    for (int feedback = 0; feedback <= 1; ++feedback) {
      assert_xffl_ok(xffl_set_option(st, XFFL_OPT_WIRE_FORMAT, format));
      assert_xffl_ok(xffl_set_option(st, XFFL_OPT_ERROR_FEEDBACK, feedback));
      assert_xffl_ok(xffl_federated_average(st, x, 300, XFFL_F32, NULL));
      assert_memory_equal(x, copy, sizeof x);
      assert_xffl_ok(xffl_federated_average_many(st, bufs, counts, 1, XFFL_F32, NULL));
      assert_memory_equal(x, copy, sizeof x);
    }
  xffl_state_destroy(st);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_defaults),
      cmocka_unit_test(test_environment),
      cmocka_unit_test(test_values_at_any_time),
      cmocka_unit_test(test_one_group_stays_exact),
  };
  return cmocka_run_group_tests_name("api.wire_options", tests, NULL, NULL);
}
