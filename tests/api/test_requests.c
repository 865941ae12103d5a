/* The nonblocking averages (xffl/request.h) through libxffl.so on a one-rank federation (backend none,
 * so a request's run ends at once; the state stays the request's until wait or test has seen it done,
 * which makes every check below deterministic): what start refuses before any run, what the state
 * answers while a request is in flight, the run's own error returned by wait and test with its status
 * and message, and free and destroy with a request in flight. Whether the run has ended when test is
 * first asked is not known (it runs on its own thread): test is asked after wait. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>
#include <string.h>

#include "api_support.h"
#include "xffl_test.h"

static xffl_state_t *federation_of_one(void) {
  xffl_state_t *st = api_global_state(1, 0);
  const int sizes[] = {1};
  assert_xffl_ok(xffl_federated_scaling(st, sizes, 1, 0));
  return st;
}

static void test_start_refusals(void **state) {
  (void)state;
  xffl_state_t *st = api_global_state(1, 0);
  float x[4] = {1, 2, 3, 4};
  xffl_request_t *req = NULL;
  /* No federated scaling: refused by the start itself, nothing written, the state free again. */
  assert_xffl_status(xffl_federated_average_start(st, x, 4, XFFL_F32, NULL, &req), XFFL_ESTATE);
  api_expect_message_contains("xffl_federated_average_start", "no layout");
  assert_null(req);
  const int sizes[] = {1};
  assert_xffl_ok(xffl_federated_scaling(st, sizes, 1, 0));
  assert_xffl_status(xffl_federated_average_start(NULL, x, 4, XFFL_F32, NULL, &req), XFFL_EINVAL);
  assert_xffl_status(xffl_federated_average_start(st, x, 4, XFFL_F32, NULL, NULL), XFFL_EINVAL);
  assert_xffl_status(xffl_federated_average_start(st, NULL, 4, XFFL_F32, NULL, &req), XFFL_EINVAL);
  assert_xffl_status(xffl_federated_average_start(st, x, 4, (xffl_dtype_t)99, NULL, &req), XFFL_EINVAL);
  api_expect_message_contains("unknown dtype 99", "dtype");
  size_t counts[2] = {4, SIZE_MAX / 2};
  void *bufs[2] = {x, x};
  assert_xffl_status(xffl_federated_average_many_start(st, bufs, counts, 2, XFFL_F32, NULL, &req), XFFL_EINVAL);
  api_expect_message_contains("bufs[1] overflows", "many overflow");
  assert_null(req);
  assert_xffl_status(xffl_request_wait(NULL), XFFL_EINVAL);
  int done = -1;
  assert_xffl_status(xffl_request_test(NULL, &done), XFFL_EINVAL);
  assert_int_equal(done, -1);
  xffl_request_free(NULL);
  /* None of the refusals held the state. */
  assert_xffl_ok(xffl_federated_average(st, x, 4, XFFL_F32, NULL));
  xffl_state_destroy(st);
}

static void test_in_flight(void **state) {
  (void)state;
  xffl_state_t *st = federation_of_one();
  float x[3] = {0.5f, -1.0f, 2.0f}, y[3] = {0};
  xffl_request_t *req = NULL;
  assert_xffl_ok(xffl_federated_average_start(st, x, 3, XFFL_F32, NULL, &req));
  assert_non_null(req);
  int value = -1;
  assert_xffl_ok(xffl_get_int(st, XFFL_ATTR_FEDERATED_WORLD_SIZE, &value));
  assert_int_equal(value, 1);
  char text[8192];
  size_t len = 0;
  assert_xffl_ok(xffl_state_describe(st, XFFL_FORMAT_TEXT, text, sizeof text, &len));
  assert_true(len > 0);
  xffl_group_t *world = NULL;
  assert_xffl_ok(xffl_get_group(st, XFFL_GROUP_WORLD, 0, &world));
  assert_xffl_status(xffl_barrier(world), XFFL_ESTATE);
  api_expect_message_contains("xffl_barrier is refused while the request of xffl_federated_average_start is in flight",
                              "barrier in flight");
  assert_xffl_status(xffl_federated_average_many_start(st, NULL, NULL, 0, XFFL_F32, NULL, &req), XFFL_ESTATE);
  assert_xffl_status(xffl_set_federated_weights(st, NULL, 0), XFFL_ESTATE);
  assert_xffl_status(xffl_unset_federated_scaling(st), XFFL_ESTATE);
  assert_xffl_status(xffl_set_option(st, XFFL_OPT_TIMEOUT_MS, 5000), XFFL_ESTATE);
  assert_xffl_status(xffl_federated_average(st, y, 3, XFFL_F32, NULL), XFFL_ESTATE);
  assert_xffl_ok(xffl_request_wait(req));
  int done = 0;
  assert_xffl_ok(xffl_request_test(req, &done));
  assert_int_equal(done, 1);
  xffl_request_free(req);
  const float mean[3] = {0.5f, -1.0f, 2.0f};
  assert_memory_equal(x, mean, sizeof x);
  assert_xffl_ok(xffl_barrier(world));
  assert_xffl_ok(xffl_unset_federated_scaling(st));
  xffl_state_destroy(st);
}

/* A failure of the run (here the strategy's check: weights with an integer dtype) comes back from test and
 * wait with its own status and message, naming the call that started it; again at every ask. */
static void test_run_error(void **state) {
  (void)state;
  xffl_state_t *st = federation_of_one();
  const double weights[] = {3.0};
  assert_xffl_ok(xffl_set_federated_weights(st, weights, 1));
  int32_t n[2] = {1, 2};
  assert_xffl_status(xffl_federated_average(st, n, 2, XFFL_I32, NULL), XFFL_EINVAL);
  char blocking[512];
  snprintf(blocking, sizeof blocking, "%s", strstr(xffl_last_error_message(), ": ") + 2);
  xffl_request_t *req = NULL;
  assert_xffl_ok(xffl_federated_average_start(st, n, 2, XFFL_I32, NULL, &req));
  assert_xffl_status(xffl_request_wait(req), XFFL_EINVAL);
  api_expect_message_contains("xffl_request_wait: xffl_federated_average_start: ", "wait prefix");
  api_expect_message_contains(blocking, "the blocking call's message");
  int done = 0;
  assert_xffl_status(xffl_request_test(req, &done), XFFL_EINVAL);
  assert_int_equal(done, 1);
  api_expect_message_contains("xffl_request_test: xffl_federated_average_start: ", "test prefix");
  api_expect_message_contains(blocking, "the blocking call's message");
  xffl_request_free(req);
  xffl_state_destroy(st);
}

static void test_free_and_destroy_in_flight(void **state) {
  (void)state;
  xffl_state_t *st = federation_of_one();
  double a[2] = {1.5, 2.5}, b[3] = {4, 5, 6};
  void *bufs[2] = {a, b};
  size_t counts[2] = {2, 3};
  xffl_request_t *req = NULL;
  assert_xffl_ok(xffl_federated_average_many_start(st, bufs, counts, 2, XFFL_F64, NULL, &req));
  xffl_request_free(req); /* never tested nor waited: free waits, the state is free again */
  assert_xffl_ok(xffl_set_option(st, XFFL_OPT_TIMEOUT_MS, 5000));
  assert_xffl_ok(xffl_federated_average_start(st, a, 2, XFFL_F64, NULL, &req));
  xffl_state_destroy(st); /* with the request in flight: waits for its run; the request keeps its answer */
  assert_xffl_ok(xffl_request_wait(req));
  int done = 0;
  assert_xffl_ok(xffl_request_test(req, &done));
  assert_int_equal(done, 1);
  xffl_request_free(req);
  assert_true(a[0] == 1.5 && a[1] == 2.5 && b[2] == 6);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_start_refusals),
      cmocka_unit_test(test_in_flight),
      cmocka_unit_test(test_run_error),
      cmocka_unit_test(test_free_and_destroy_in_flight),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
