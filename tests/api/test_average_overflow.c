/* xffl_federated_average and xffl_federated_average_many refuse a count whose size in bytes overflows
 * size_t (as the collectives do), naming the buffer, before any buffer is read or written. Through
 * libxffl.so, on a one-rank federation (backend none): a valid call would average in place. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>
#include <string.h>

#include "api_support.h"
#include "xffl_test.h"

static void test_many_overflow(void **state) {
  (void)state;
  xffl_state_t *st = api_global_state(1, 0);
  const int sizes[] = {1};
  assert_xffl_ok(xffl_federated_scaling(st, sizes, 1, 0));
  float a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8};
  void *bufs[2] = {a, b};
  const float a0[4] = {1, 2, 3, 4}, b0[4] = {5, 6, 7, 8};

  /* counts[1] * 4 bytes overflows: EINVAL naming bufs[1]; a is not averaged either. */
  size_t counts[2] = {4, SIZE_MAX / 2};
  assert_xffl_status(xffl_federated_average_many(st, bufs, counts, 2, XFFL_F32, NULL), XFFL_EINVAL);
  api_expect_message_contains("for bufs[1] overflows the address space", "counts[1] overflow");
  api_expect_message_contains("count 9223372036854775807 of f32", "counts[1] overflow");
  assert_memory_equal(a, a0, sizeof a);
  assert_memory_equal(b, b0, sizeof b);

  /* For f64 the bound is SIZE_MAX / 8. */
  double d[2] = {1.5, 2.5};
  void *dbufs[1] = {d};
  size_t dcount[1] = {SIZE_MAX / 8 + 1};
  assert_xffl_status(xffl_federated_average_many(st, dbufs, dcount, 1, XFFL_F64, NULL), XFFL_EINVAL);
  api_expect_message_contains("bufs[0] overflows", "f64 overflow");
  assert_true(d[0] == 1.5 && d[1] == 2.5);

  /* Each count fits but their sum in bytes does not: EINVAL naming the index where it stops fitting. */
  size_t sums[2] = {SIZE_MAX / 4 - 1, 4};
  assert_xffl_status(xffl_federated_average_many(st, bufs, sums, 2, XFFL_F32, NULL), XFFL_EINVAL);
  api_expect_message_contains("counts[0..1] add up to more bytes than the address space holds", "sum overflow");
  assert_memory_equal(a, a0, sizeof a);
  assert_memory_equal(b, b0, sizeof b);

  /* The single-buffer call has the same bound. */
  assert_xffl_status(xffl_federated_average(st, a, SIZE_MAX / 2, XFFL_F32, NULL), XFFL_EINVAL);
  api_expect_message_contains("for buf overflows the address space", "single overflow");
  assert_memory_equal(a, a0, sizeof a);

  /* Valid counts still work (one group of one rank: the mean is the buffer itself). */
  size_t fine[2] = {4, 4};
  assert_xffl_ok(xffl_federated_average_many(st, bufs, fine, 2, XFFL_F32, NULL));
  assert_memory_equal(a, a0, sizeof a);
  assert_memory_equal(b, b0, sizeof b);
  xffl_state_destroy(st);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_many_overflow)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
