/* xffl_state_from_env with backend none, through libxffl.so: it sets the init device as xFFL's setup
 * does (CPU execution: XFFL_DEVICE_CPU, no meta initialization), and afterwards the device index can
 * still be chosen (xffl_set_exec_device with the layout's stream count) while the stream count cannot.
 * This program sets its own (torchrun-style) environment, single-threaded, before each state is made. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>

#include "api_support.h"
#include "xffl_test.h"

static void launcher_environment(int rank, int world, const char *federated, const char *hsdp, const char *streams) {
  char text[16];
  snprintf(text, sizeof text, "%d", rank);
  setenv("RANK", text, 1);
  snprintf(text, sizeof text, "%d", world);
  setenv("WORLD_SIZE", text, 1);
  setenv("MASTER_ADDR", "127.0.0.1", 1);
  setenv("MASTER_PORT", "29500", 1);
  setenv("XFFL_BACKEND", "none", 1);
  unsetenv("XFFL_FEDERATED");
  unsetenv("XFFL_HSDP");
  unsetenv("XFFL_STREAMS");
  if (federated) setenv("XFFL_FEDERATED", federated, 1);
  if (hsdp) setenv("XFFL_HSDP", hsdp, 1);
  if (streams) setenv("XFFL_STREAMS", streams, 1);
}

static void test_init_device_set(void **state) {
  (void)state;
  /* FSDP, HSDP and federated scaling: with CPU execution xFFL's _get_init_device gives (cpu, False). */
  const struct {
    const char *federated, *hsdp;
  } layouts[] = {{NULL, NULL}, {NULL, "2"}, {"4,8", "2"}};
  for (size_t i = 0; i < 3; ++i)
    for (int r = 0; r < 12; r += 5) {
      launcher_environment(r, 12, layouts[i].federated, layouts[i].hsdp, NULL);
      xffl_state_t *st = NULL;
      assert_xffl_ok(xffl_state_from_env(&st));
      char ctx[64];
      snprintf(ctx, sizeof ctx, "layout %zu rank %d", i, r);
      api_expect_int(st, XFFL_ATTR_INIT_DEVICE, XFFL_DEVICE_CPU, ctx);
      api_expect_int(st, XFFL_ATTR_META_INITIALIZATION, 0, ctx);
      api_expect_int(st, XFFL_ATTR_DEVICE_TYPE, XFFL_DEVICE_CPU, ctx);
      api_expect_int(st, XFFL_ATTR_CURRENT_DEVICE, 0, ctx);
      xffl_state_destroy(st);
    }
}

static void test_exec_device_after_from_env(void **state) {
  (void)state;
  launcher_environment(5, 12, "4,8", "2", "3");
  xffl_state_t *st = NULL;
  assert_xffl_ok(xffl_state_from_env(&st));
  assert_int_equal(xffl_is_federated_scaling_setup(st), 1);
  api_expect_int(st, XFFL_ATTR_STREAMS, 3, "from_env streams 3");

  /* The device index can be chosen (CPU: 0, or -1 to choose), with the layout's stream count. */
  assert_xffl_ok(xffl_set_exec_device(st, 0, 3));
  api_expect_int(st, XFFL_ATTR_CURRENT_DEVICE, 0, "after set_exec_device(0, 3)");
  assert_xffl_ok(xffl_set_exec_device(st, -1, 3));
  api_expect_int(st, XFFL_ATTR_CURRENT_DEVICE, 0, "after set_exec_device(-1, 3)");
  /* The layout and its three instances survive. */
  api_expect_group(st, XFFL_GROUP_FEDERATED, 2, "5", "instance 2 after set_exec_device");
  api_expect_group(st, XFFL_GROUP_REPLICA, 2, "5,7,9,11", "instance 2 after set_exec_device");

  /* Another stream count: ESTATE, naming both counts; nothing changes. */
  assert_xffl_status(xffl_set_exec_device(st, 0, 2), XFFL_ESTATE);
  api_expect_message_contains("streams 2 differs from the 3 the layout's groups were made with", "streams 2");
  api_expect_int(st, XFFL_ATTR_STREAMS, 3, "after refused streams 2");
  /* A device a CPU does not have: EINVAL as before the layout. */
  assert_xffl_status(xffl_set_exec_device(st, 1, 3), XFFL_EINVAL);
  api_expect_message_contains("device index 1 outside [0, 1) for cpu execution", "device 1");
  api_expect_int(st, XFFL_ATTR_CURRENT_DEVICE, 0, "after refused device 1");

  /* The init device can be changed too, and unset + another stream count + the layout again works. */
  assert_xffl_ok(xffl_set_init_device(st, XFFL_DEVICE_META, 1));
  api_expect_int(st, XFFL_ATTR_INIT_DEVICE, XFFL_DEVICE_META, "set_init_device after from_env");
  assert_xffl_ok(xffl_unset_federated_scaling(st));
  assert_xffl_ok(xffl_set_exec_device(st, 0, 2));
  const int sizes[] = {4, 8};
  assert_xffl_ok(xffl_federated_scaling(st, sizes, 2, 2));
  api_expect_group(st, XFFL_GROUP_REPLICA, 1, "5,7,9,11", "2 instances");
  xffl_group_t *g = NULL;
  assert_xffl_status(xffl_get_group(st, XFFL_GROUP_REPLICA, 2, &g), XFFL_EINVAL);

  /* String options are read by set_global, which from_env called. */
  assert_xffl_status(xffl_set_option_string(st, XFFL_OPT_JOB_ID, "late"), XFFL_ESTATE);
  xffl_state_destroy(st);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_init_device_set),
      cmocka_unit_test(test_exec_device_after_from_env),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
