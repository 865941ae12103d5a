/* Error paths of every exported function of the public headers (include/xffl), through libxffl.so: NULL arguments, calls out
 * of order, small buffers, unknown enum values, status strings, the thread-local message, outputs written
 * only on success, NULL-safe destroys, collectives of backend NONE, process groups, options and the
 * environment variables read by xffl_state_create. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_support.h"
#include "xffl_test.h"

/* EINVAL whose message names the argument (as a word: "buf" is not named by "buffer"). */
#define EXPECT_NULL_ARG(call, name)                                                                        \
  do {                                                                                                     \
    assert_xffl_status((call), XFFL_EINVAL);                                                               \
    if (!api_has_word(xffl_last_error_message(), (name)))                                                  \
      fail_msg("%s: message '%s' does not name the argument '%s'", #call, xffl_last_error_message(), (name)); \
  } while (0)

static void clear_env(void) {
  unsetenv("XFFL_TIMEOUT");
  unsetenv("XFFL_LOG_LEVEL");
  unsetenv("XFFL_CROSS_FACILITY_BACKEND");
}

static int group_setup(void **state) {
  (void)state;
  clear_env();
  return 0;
}

/* A W=12 state of rank 5 with 5.4's layout (federated (4,8), hsdp 2). */
static xffl_state_t *state_5_4_rank5(void) {
  const int sizes[] = {4, 8};
  xffl_state_t *st = api_global_state(12, 5);
  assert_xffl_ok(xffl_federated_scaling(st, sizes, 2, 2));
  return st;
}

/* ---------------------------------------------------------------- NULL arguments */

static void test_null_state_functions(void **state) {
  (void)state;
  xffl_state_t *st = api_global_state(4, 1);
  const int sizes[] = {4};
  int value = 0;
  size_t len = 0;
  int buf[8];
  char text[64];

  EXPECT_NULL_ARG(xffl_state_create(NULL), "out");
  EXPECT_NULL_ARG(xffl_state_from_env(NULL), "out");
  EXPECT_NULL_ARG(xffl_set_global(NULL, XFFL_BACKEND_NONE, XFFL_DEVICE_CPU, "h", 1, 0, 1), "st");
  xffl_state_t *fresh = NULL;
  assert_xffl_ok(xffl_state_create(&fresh));
  EXPECT_NULL_ARG(xffl_set_global(fresh, XFFL_BACKEND_NONE, XFFL_DEVICE_CPU, NULL, 1, 0, 1), "master_addr");
  xffl_state_destroy(fresh);
  EXPECT_NULL_ARG(xffl_set_node(NULL, 0, 1, 0, 4), "st");
  EXPECT_NULL_ARG(xffl_set_exec_device(NULL, -1, 1), "st");
  EXPECT_NULL_ARG(xffl_set_init_device(NULL, XFFL_DEVICE_CPU, 0), "st");
  EXPECT_NULL_ARG(xffl_set_fsdp(NULL), "st");
  EXPECT_NULL_ARG(xffl_set_hsdp(NULL, 2), "st");
  EXPECT_NULL_ARG(xffl_federated_scaling(NULL, sizes, 1, 0), "st");
  EXPECT_NULL_ARG(xffl_federated_scaling(st, NULL, 1, 0), "sizes");
  EXPECT_NULL_ARG(xffl_unset_fsdp(NULL), "st");
  EXPECT_NULL_ARG(xffl_unset_hsdp(NULL), "st");
  EXPECT_NULL_ARG(xffl_unset_federated_scaling(NULL), "st");
  assert_int_equal(xffl_is_node_setup(NULL), 0);
  assert_int_equal(xffl_is_fsdp_setup(NULL), 0);
  assert_int_equal(xffl_is_hsdp_setup(NULL), 0);
  assert_int_equal(xffl_is_federated_scaling_setup(NULL), 0);
  EXPECT_NULL_ARG(xffl_get_int(NULL, XFFL_ATTR_RANK, &value), "st");
  EXPECT_NULL_ARG(xffl_get_int(st, XFFL_ATTR_RANK, NULL), "value");
  EXPECT_NULL_ARG(xffl_get_ints(NULL, XFFL_ATTR_RANK, buf, 8, &len), "st");
  EXPECT_NULL_ARG(xffl_get_ints(st, XFFL_ATTR_RANK, buf, 8, NULL), "len");
  EXPECT_NULL_ARG(xffl_get_master_addr(NULL, text, sizeof text, &len), "st");
  EXPECT_NULL_ARG(xffl_get_master_addr(st, text, sizeof text, NULL), "len");
  EXPECT_NULL_ARG(xffl_set_option(NULL, XFFL_OPT_TIMEOUT_MS, 10), "st");
  EXPECT_NULL_ARG(xffl_get_option(NULL, XFFL_OPT_TIMEOUT_MS, &value), "st");
  EXPECT_NULL_ARG(xffl_get_option(st, XFFL_OPT_TIMEOUT_MS, NULL), "value");
  EXPECT_NULL_ARG(xffl_state_describe(NULL, XFFL_FORMAT_TEXT, text, sizeof text, &len), "st");
  EXPECT_NULL_ARG(xffl_state_describe(st, XFFL_FORMAT_TEXT, text, sizeof text, NULL), "len");
  xffl_state_destroy(st);
}

static void test_null_group_and_mesh_functions(void **state) {
  (void)state;
  xffl_state_t *st = api_global_state(4, 1);
  xffl_group_t *g = NULL;
  const int ranks[] = {1};
  const int shape[] = {2, 2};
  int shape_out[2], out[16], value = 0;
  size_t ndim = 0, len = 0;

  EXPECT_NULL_ARG(xffl_get_group(NULL, XFFL_GROUP_WORLD, 0, &g), "st");
  EXPECT_NULL_ARG(xffl_get_group(st, XFFL_GROUP_WORLD, 0, NULL), "out");
  EXPECT_NULL_ARG(xffl_create_process_group(NULL, ranks, 1, "d", &g), "st");
  EXPECT_NULL_ARG(xffl_create_process_group(st, NULL, 1, "d", &g), "ranks");
  EXPECT_NULL_ARG(xffl_create_process_group(st, ranks, 1, "d", NULL), "out");
  assert_xffl_ok(xffl_get_group(st, XFFL_GROUP_WORLD, 0, &g));
  EXPECT_NULL_ARG(xffl_group_size(NULL, &value), "group");
  EXPECT_NULL_ARG(xffl_group_size(g, NULL), "size");
  EXPECT_NULL_ARG(xffl_group_rank(NULL, &value), "group");
  EXPECT_NULL_ARG(xffl_group_rank(g, NULL), "rank");
  EXPECT_NULL_ARG(xffl_group_ranks(NULL, out, 16, &len), "group");
  EXPECT_NULL_ARG(xffl_group_ranks(g, out, 16, NULL), "len");
  assert_non_null(xffl_group_description(NULL));
  assert_string_equal(xffl_group_description(NULL), "");

  assert_xffl_ok(xffl_set_hsdp(st, 2));
  EXPECT_NULL_ARG(xffl_get_mesh(NULL, XFFL_MESH_HSDP, shape_out, 2, &ndim, out, 16, &len), "st");
  EXPECT_NULL_ARG(xffl_get_mesh(st, XFFL_MESH_HSDP, NULL, 2, &ndim, out, 16, &len), "shape");
  EXPECT_NULL_ARG(xffl_get_mesh(st, XFFL_MESH_HSDP, shape_out, 2, NULL, out, 16, &len), "ndim");
  EXPECT_NULL_ARG(xffl_get_mesh(st, XFFL_MESH_HSDP, shape_out, 2, &ndim, out, 16, NULL), "len");
  EXPECT_NULL_ARG(xffl_create_device_mesh(NULL, 2, out, 16, &len), "shape");
  EXPECT_NULL_ARG(xffl_create_device_mesh(shape, 2, out, 16, NULL), "len");
  xffl_state_destroy(st);
}

static void test_null_collective_and_federated_functions(void **state) {
  (void)state;
  const int sizes[] = {1};
  const double weights[] = {1.0};
  xffl_state_t *st = api_global_state(1, 0);
  assert_xffl_ok(xffl_federated_scaling(st, sizes, 1, 0));
  xffl_group_t *g = NULL;
  assert_xffl_ok(xffl_get_group(st, XFFL_GROUP_WORLD, 0, &g));
  float a[3] = {1, 2, 3}, b[3] = {0};
  void *bufs[1] = {a};
  size_t counts[1] = {3};

  EXPECT_NULL_ARG(xffl_allreduce(NULL, a, b, 3, XFFL_F32, XFFL_SUM, NULL), "group");
  EXPECT_NULL_ARG(xffl_allreduce(g, NULL, b, 3, XFFL_F32, XFFL_SUM, NULL), "send");
  EXPECT_NULL_ARG(xffl_allreduce(g, a, NULL, 3, XFFL_F32, XFFL_SUM, NULL), "recv");
  EXPECT_NULL_ARG(xffl_broadcast(NULL, a, 3, XFFL_F32, 0, NULL), "group");
  EXPECT_NULL_ARG(xffl_broadcast(g, NULL, 3, XFFL_F32, 0, NULL), "buf");
  EXPECT_NULL_ARG(xffl_allgather(NULL, a, b, 3, XFFL_F32, NULL), "group");
  EXPECT_NULL_ARG(xffl_allgather(g, NULL, b, 3, XFFL_F32, NULL), "send");
  EXPECT_NULL_ARG(xffl_allgather(g, a, NULL, 3, XFFL_F32, NULL), "recv");
  EXPECT_NULL_ARG(xffl_reduce_scatter(NULL, a, b, 3, XFFL_F32, XFFL_SUM, NULL), "group");
  EXPECT_NULL_ARG(xffl_reduce_scatter(g, NULL, b, 3, XFFL_F32, XFFL_SUM, NULL), "send");
  EXPECT_NULL_ARG(xffl_reduce_scatter(g, a, NULL, 3, XFFL_F32, XFFL_SUM, NULL), "recv");
  EXPECT_NULL_ARG(xffl_barrier(NULL), "group");
  EXPECT_NULL_ARG(xffl_federated_average(NULL, a, 3, XFFL_F32, NULL), "st");
  EXPECT_NULL_ARG(xffl_federated_average(st, NULL, 3, XFFL_F32, NULL), "buf");
  EXPECT_NULL_ARG(xffl_federated_average_many(NULL, bufs, counts, 1, XFFL_F32, NULL), "st");
  EXPECT_NULL_ARG(xffl_federated_average_many(st, NULL, counts, 1, XFFL_F32, NULL), "bufs");
  EXPECT_NULL_ARG(xffl_federated_average_many(st, bufs, NULL, 1, XFFL_F32, NULL), "counts");
  void *with_null[2] = {a, NULL};
  size_t two_counts[2] = {3, 3};
  assert_xffl_status(xffl_federated_average_many(st, with_null, two_counts, 2, XFFL_F32, NULL), XFFL_EINVAL);
  EXPECT_NULL_ARG(xffl_set_federated_weights(NULL, weights, 1), "st");
  EXPECT_NULL_ARG(xffl_set_federated_weights(st, NULL, 1), "weights");
  /* NULL pointers failed without touching the buffers */
  assert_true(a[0] == 1 && a[1] == 2 && a[2] == 3 && b[0] == 0);
  xffl_state_destroy(st);
}

/* Output buffers may be NULL only when cap is 0; otherwise EINVAL naming the buffer argument, with *len left
 * alone (it is written on XFFL_OK and XFFL_EBUFSIZE only). All cases are checked and reported together. */
static void test_null_output_buffers(void **state) {
  (void)state;
  xffl_state_t *st = api_global_state(4, 1);
  assert_xffl_ok(xffl_set_hsdp(st, 2));
  xffl_group_t *g = NULL;
  assert_xffl_ok(xffl_get_group(st, XFFL_GROUP_WORLD, 0, &g));
  const int shape[] = {2, 2};
  int shape_out[2];
  size_t len = 0, ndim = 0;
  const struct {
    const char *call, *name;
  } cases[] = {
      {"xffl_get_ints(st, RANK, NULL, 8, &len)", "buf"},
      {"xffl_get_master_addr(st, NULL, 64, &len)", "buf"},
      {"xffl_state_describe(st, JSON, NULL, 1 << 20, &len)", "buf"},
      {"xffl_group_ranks(g, NULL, 16, &len)", "buf"},
      {"xffl_get_mesh(st, HSDP, shape, 2, &ndim, NULL, 16, &len)", "ranks"},
      {"xffl_create_device_mesh(shape, 2, NULL, 16, &len)", "ranks"},
  };
  char report[4096] = "";
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    xffl_status_t rc = XFFL_OK;
    len = 4242; /* len is written on XFFL_OK and XFFL_EBUFSIZE only */
    switch (i) {
      case 0: rc = xffl_get_ints(st, XFFL_ATTR_RANK, NULL, 8, &len); break;
      case 1: rc = xffl_get_master_addr(st, NULL, 64, &len); break;
      case 2: rc = xffl_state_describe(st, XFFL_FORMAT_JSON, NULL, 1 << 20, &len); break;
      case 3: rc = xffl_group_ranks(g, NULL, 16, &len); break;
      case 4: rc = xffl_get_mesh(st, XFFL_MESH_HSDP, shape_out, 2, &ndim, NULL, 16, &len); break;
      default: rc = xffl_create_device_mesh(shape, 2, NULL, 16, &len); break;
    }
    const char *message = xffl_last_error_message();
    if (rc != XFFL_EINVAL || !api_has_word(message, cases[i].name)) {
      size_t used = strlen(report);
      snprintf(report + used, sizeof report - used, "\n  %s -> %s '%s' (expected EINVAL naming '%s')",
               cases[i].call, xffl_status_string(rc), rc == XFFL_OK ? "" : message, cases[i].name);
    }
    if (len != 4242) {
      size_t used = strlen(report);
      snprintf(report + used, sizeof report - used, "\n  %s -> *len written (%zu) on a failure that is not EBUFSIZE",
               cases[i].call, len);
    }
  }
  xffl_state_destroy(st);
  if (report[0]) {
    fprintf(stderr, "NULL output buffers:%s\n", report); /* cmocka truncates long messages */
    fail_msg("NULL output buffers mishandled (listed above)");
  }
}

/* ---------------------------------------------------------------- calls out of order */

/* xffl_get_stream: CUDA execution only; every other path is a clear refusal that writes nothing. */
static void test_get_stream(void **state) {
  (void)state;
  xffl_state_t *st = NULL;
  void *stream = &stream;
  EXPECT_NULL_ARG(xffl_get_stream(NULL, 0, &stream), "st");
  assert_xffl_ok(xffl_state_create(&st));
  EXPECT_NULL_ARG(xffl_get_stream(st, 0, NULL), "stream");
  assert_xffl_status(xffl_get_stream(st, 0, &stream), XFFL_ESTATE);
  assert_ptr_equal(stream, &stream);
  xffl_state_destroy(st);
  st = api_global_state(4, 1);
  assert_xffl_ok(xffl_set_exec_device(st, -1, 2));
  assert_xffl_status(xffl_get_stream(st, 2, &stream), XFFL_EINVAL);
  api_expect_message_contains("index", "stream index outside [0, 2)");
  assert_xffl_status(xffl_get_stream(st, -1, &stream), XFFL_EINVAL);
  assert_xffl_status(xffl_get_stream(st, 0, &stream), XFFL_EUNSUPPORTED);
  api_expect_message_contains("cuda", "no stream for cpu execution");
  assert_ptr_equal(stream, &stream);
  xffl_state_destroy(st);
}

static void test_calls_before_set_global(void **state) {
  (void)state;
  const int sizes[] = {1};
  const int ranks[] = {0};
  xffl_state_t *st = NULL;
  xffl_group_t *g = NULL;
  assert_xffl_ok(xffl_state_create(&st));
  assert_xffl_status(xffl_set_node(st, 0, 1, 0, 1), XFFL_ESTATE);
  api_expect_message_contains("set_global", "set_node before set_global");
  assert_xffl_status(xffl_set_exec_device(st, -1, 1), XFFL_ESTATE);
  assert_xffl_status(xffl_set_init_device(st, XFFL_DEVICE_CPU, 0), XFFL_ESTATE);
  assert_xffl_status(xffl_set_fsdp(st), XFFL_ESTATE);
  api_expect_message_contains("set_global", "set_fsdp before set_global");
  assert_xffl_status(xffl_set_hsdp(st, 1), XFFL_ESTATE);
  assert_xffl_status(xffl_federated_scaling(st, sizes, 1, 0), XFFL_ESTATE);
  assert_xffl_status(xffl_unset_fsdp(st), XFFL_ESTATE);
  assert_xffl_status(xffl_unset_hsdp(st), XFFL_ESTATE);
  assert_xffl_status(xffl_unset_federated_scaling(st), XFFL_ESTATE);
  assert_xffl_status(xffl_create_process_group(st, ranks, 1, NULL, &g), XFFL_ESTATE);
  assert_null(g);
  float x = 1;
  assert_xffl_status(xffl_federated_average(st, &x, 1, XFFL_F32, NULL), XFFL_ESTATE);
  /* Reading is fine before set_global: everything is unset. */
  api_expect_int(st, XFFL_ATTR_RANK, API_NONE, "before set_global");
  api_expect_int(st, XFFL_ATTR_WORLD_SIZE, API_NONE, "before set_global");
  api_expect_group(st, XFFL_GROUP_WORLD, 0, NULL, "before set_global");
  api_expect_mesh(st, XFFL_MESH_FSDP, NULL, "before set_global");
  char addr[16];
  size_t len = 77;
  assert_xffl_status(xffl_get_master_addr(st, addr, sizeof addr, &len), XFFL_ENOTSET);
  assert_int_equal(len, 77);
  assert_int_equal(xffl_is_node_setup(st), 0);
  /* Options are allowed at any time. */
  assert_xffl_ok(xffl_set_option(st, XFFL_OPT_TIMEOUT_MS, 1000));
  /* And nothing above changed the state: set_global still works. */
  assert_xffl_ok(xffl_set_global(st, XFFL_BACKEND_NONE, XFFL_DEVICE_CPU, API_MASTER_ADDR, API_MASTER_PORT, 0, 1));
  xffl_state_destroy(st);
}

static void test_set_global_twice(void **state) {
  (void)state;
  xffl_state_t *st = api_global_state(4, 1);
  assert_xffl_status(xffl_set_global(st, XFFL_BACKEND_NONE, XFFL_DEVICE_CPU, "10.0.0.1", 1234, 2, 8), XFFL_ESTATE);
  api_expect_int(st, XFFL_ATTR_RANK, 1, "after a second set_global");
  api_expect_int(st, XFFL_ATTR_WORLD_SIZE, 4, "after a second set_global");
  api_expect_int(st, XFFL_ATTR_MASTER_PORT, API_MASTER_PORT, "after a second set_global");
  api_expect_group(st, XFFL_GROUP_WORLD, 0, "0-3", "after a second set_global");
  xffl_state_destroy(st);
}

typedef enum { L_FSDP, L_HSDP, L_FED, L_COUNT } layout_id;

static xffl_status_t set_layout(xffl_state_t *st, layout_id id) {
  static const int sizes[] = {2, 2};
  switch (id) {
    case L_FSDP: return xffl_set_fsdp(st);
    case L_HSDP: return xffl_set_hsdp(st, 2);
    default: return xffl_federated_scaling(st, sizes, 2, 0);
  }
}

static xffl_status_t unset_layout(xffl_state_t *st, layout_id id) {
  switch (id) {
    case L_FSDP: return xffl_unset_fsdp(st);
    case L_HSDP: return xffl_unset_hsdp(st);
    default: return xffl_unset_federated_scaling(st);
  }
}

/* The flags of layout id on W = 4 (FSDP mesh for FSDP and the symmetric federation without HSDP). */
static void expect_layout(const xffl_state_t *st, layout_id id, const char *ctx) {
  if (xffl_is_fsdp_setup(st) != (id == L_FSDP || id == L_FED) || xffl_is_hsdp_setup(st) != (id == L_HSDP) ||
      xffl_is_federated_scaling_setup(st) != (id == L_FED))
    fail_msg("%s: layout %d changed (fsdp %d hsdp %d federated %d)", ctx, id, xffl_is_fsdp_setup(st),
             xffl_is_hsdp_setup(st), xffl_is_federated_scaling_setup(st));
  api_expect_group(st, XFFL_GROUP_FSDP, 0, id == L_FSDP ? "0-3" : id == L_FED ? "0,1" : NULL, ctx);
}

static void test_two_layouts_and_wrong_unset(void **state) {
  (void)state;
  for (int first = 0; first < L_COUNT; ++first) {
    xffl_state_t *st = api_global_state(4, 1);
    assert_xffl_ok(set_layout(st, (layout_id)first));
    for (int second = 0; second < L_COUNT; ++second) {
      char ctx[64];
      snprintf(ctx, sizeof ctx, "layout %d then layout %d", first, second);
      assert_xffl_status(set_layout(st, (layout_id)second), XFFL_ESTATE);
      expect_layout(st, (layout_id)first, ctx);
      if (second != first) {
        snprintf(ctx, sizeof ctx, "layout %d then unset %d", first, second);
        assert_xffl_status(unset_layout(st, (layout_id)second), XFFL_ESTATE);
        expect_layout(st, (layout_id)first, ctx);
      }
    }
    /* set_node and the stream count shape the layout: refused once it exists, and nothing changes
     * (set_exec_device with the same stream count may still choose the device: test_from_env). */
    assert_xffl_status(xffl_set_node(st, 1, 2, 0, 2), XFFL_ESTATE);
    assert_int_equal(xffl_is_node_setup(st), 0);
    assert_xffl_status(xffl_set_exec_device(st, -1, 3), XFFL_ESTATE);
    xffl_group_t *g = NULL;
    assert_xffl_status(xffl_get_group(st, XFFL_GROUP_WORLD, 1, &g), XFFL_EINVAL);

    assert_xffl_ok(unset_layout(st, (layout_id)first));
    assert_xffl_status(unset_layout(st, (layout_id)first), XFFL_ESTATE);
    assert_int_equal(xffl_is_fsdp_setup(st) + xffl_is_hsdp_setup(st) + xffl_is_federated_scaling_setup(st), 0);
    /* After unset everything is allowed again, and the next layout is complete. */
    assert_xffl_ok(xffl_set_node(st, 1, 2, 0, 2));
    assert_xffl_ok(xffl_set_exec_device(st, -1, 2));
    assert_xffl_ok(set_layout(st, (layout_id)((first + 1) % L_COUNT)));
    expect_layout(st, (layout_id)((first + 1) % L_COUNT), "next layout after unset");
    xffl_state_destroy(st);
  }
}

static void test_federated_without_federated_scaling(void **state) {
  (void)state;
  const double weights[] = {1.0};
  float x[2] = {1, 2};
  void *bufs[1] = {x};
  size_t counts[1] = {2};
  xffl_state_t *st = api_global_state(1, 0);
  assert_xffl_status(xffl_federated_average(st, x, 2, XFFL_F32, NULL), XFFL_ESTATE);
  assert_xffl_ok(xffl_set_fsdp(st));
  assert_xffl_status(xffl_federated_average(st, x, 2, XFFL_F32, NULL), XFFL_ESTATE);
  api_expect_message_contains("federated_scaling", "federated_average on FSDP");
  assert_xffl_status(xffl_federated_average_many(st, bufs, counts, 1, XFFL_F32, NULL), XFFL_ESTATE);
  assert_xffl_status(xffl_set_federated_weights(st, weights, 1), XFFL_ESTATE);
  assert_true(x[0] == 1 && x[1] == 2);
  xffl_state_destroy(st);
}

/* ---------------------------------------------------------------- small buffers */

#define SENTINEL (-777)

static void fill(int *buf, size_t n) {
  for (size_t i = 0; i < n; ++i) buf[i] = SENTINEL;
}

static void expect_untouched(const int *buf, size_t n, const char *what) {
  for (size_t i = 0; i < n; ++i)
    if (buf[i] != SENTINEL) fail_msg("%s: buffer written on XFFL_EBUFSIZE (entry %zu is %d)", what, i, buf[i]);
}

static void test_small_buffers(void **state) {
  (void)state;
  xffl_state_t *st = state_5_4_rank5();
  int buf[16];
  size_t len;

  /* get_ints: (4, 8) needs 2 */
  fill(buf, 16);
  len = 0;
  assert_xffl_status(xffl_get_ints(st, XFFL_ATTR_FEDERATED_LOCAL_SIZE, buf, 1, &len), XFFL_EBUFSIZE);
  assert_int_equal(len, 2);
  expect_untouched(buf, 16, "get_ints cap 1");
  len = 0;
  assert_xffl_status(xffl_get_ints(st, XFFL_ATTR_FEDERATED_LOCAL_SIZE, NULL, 0, &len), XFFL_EBUFSIZE);
  assert_int_equal(len, 2);
  assert_xffl_ok(xffl_get_ints(st, XFFL_ATTR_FEDERATED_LOCAL_SIZE, buf, 2, &len));
  assert_true(len == 2 && buf[0] == 4 && buf[1] == 8 && buf[2] == SENTINEL);

  /* get_mesh: the (4, 2) HSDP mesh of federation 1 needs 8 ranks and 2 extents; on EBUFSIZE both ndim
   * and len are written, shape and ranks stay untouched */
  int shape[2] = {SENTINEL, SENTINEL};
  size_t ndim = 99;
  fill(buf, 16);
  len = 0;
  assert_xffl_status(xffl_get_mesh(st, XFFL_MESH_HSDP, shape, 2, &ndim, buf, 7, &len), XFFL_EBUFSIZE);
  assert_int_equal(len, 8);
  expect_untouched(buf, 16, "get_mesh cap 7");
  assert_true(shape[0] == SENTINEL && shape[1] == SENTINEL && ndim == 2);
  ndim = 99;
  len = 0;
  assert_xffl_status(xffl_get_mesh(st, XFFL_MESH_HSDP, shape, 1, &ndim, buf, 16, &len), XFFL_EBUFSIZE);
  assert_true(ndim == 2 && len == 8 && shape[0] == SENTINEL);
  api_expect_message_contains("2 dimensions, shape holds 1", "get_mesh shape_cap 1");
  expect_untouched(buf, 16, "get_mesh shape_cap 1");
  ndim = 99;
  assert_xffl_status(xffl_get_mesh(st, XFFL_MESH_HSDP, NULL, 0, &ndim, NULL, 0, &len), XFFL_EBUFSIZE);
  assert_true(ndim == 2 && len == 8);
  len = 0;
  assert_xffl_status(xffl_get_mesh(st, XFFL_MESH_HSDP, shape, 2, &ndim, NULL, 0, &len), XFFL_EBUFSIZE);
  assert_int_equal(len, 8);
  assert_xffl_ok(xffl_get_mesh(st, XFFL_MESH_HSDP, shape, 2, &ndim, buf, 8, &len));
  assert_true(len == 8 && ndim == 2 && shape[0] == 4 && shape[1] == 2 && buf[0] == 4 && buf[7] == 11);

  /* group_ranks: the federation 4..11 needs 8 */
  xffl_group_t *g = NULL;
  assert_xffl_ok(xffl_get_group(st, XFFL_GROUP_FEDERATION, 0, &g));
  fill(buf, 16);
  len = 0;
  assert_xffl_status(xffl_group_ranks(g, buf, 7, &len), XFFL_EBUFSIZE);
  assert_int_equal(len, 8);
  expect_untouched(buf, 16, "group_ranks cap 7");
  len = 0;
  assert_xffl_status(xffl_group_ranks(g, NULL, 0, &len), XFFL_EBUFSIZE);
  assert_int_equal(len, 8);

  /* get_master_addr: "127.0.0.1" needs 10 bytes with the NUL */
  char text[16];
  memset(text, 'Z', sizeof text);
  len = 0;
  assert_xffl_status(xffl_get_master_addr(st, text, strlen(API_MASTER_ADDR), &len), XFFL_EBUFSIZE);
  assert_int_equal(len, strlen(API_MASTER_ADDR));
  for (size_t i = 0; i < sizeof text; ++i) assert_int_equal(text[i], 'Z');
  assert_xffl_status(xffl_get_master_addr(st, NULL, 0, &len), XFFL_EBUFSIZE);
  assert_int_equal(len, strlen(API_MASTER_ADDR));
  assert_xffl_ok(xffl_get_master_addr(st, text, strlen(API_MASTER_ADDR) + 1, &len));
  assert_string_equal(text, API_MASTER_ADDR);

  /* state_describe, both formats: cap == len leaves no room for the NUL */
  for (int format = XFFL_FORMAT_TEXT; format <= XFFL_FORMAT_JSON; ++format) {
    size_t need = 0;
    assert_xffl_status(xffl_state_describe(st, (xffl_format_t)format, NULL, 0, &need), XFFL_EBUFSIZE);
    assert_true(need > 100);
    char *out = malloc(need + 1);
    assert_non_null(out);
    memset(out, 'Z', need + 1);
    len = 0;
    assert_xffl_status(xffl_state_describe(st, (xffl_format_t)format, out, need, &len), XFFL_EBUFSIZE);
    assert_int_equal(len, need);
    for (size_t i = 0; i <= need; ++i)
      if (out[i] != 'Z') fail_msg("describe format %d: buffer written on XFFL_EBUFSIZE at %zu", format, i);
    assert_xffl_ok(xffl_state_describe(st, (xffl_format_t)format, out, need + 1, &len));
    assert_int_equal(len, need);
    assert_int_equal(strlen(out), need);
    free(out);
  }

  /* create_device_mesh: (2, 3) needs 6 */
  const int mesh_shape[] = {2, 3};
  fill(buf, 16);
  len = 0;
  assert_xffl_status(xffl_create_device_mesh(mesh_shape, 2, buf, 5, &len), XFFL_EBUFSIZE);
  assert_int_equal(len, 6);
  expect_untouched(buf, 16, "create_device_mesh cap 5");
  assert_xffl_ok(xffl_create_device_mesh(mesh_shape, 2, buf, 6, &len));
  assert_int_equal(len, 6);
  for (int i = 0; i < 6; ++i) assert_int_equal(buf[i], i);
  assert_int_equal(buf[6], SENTINEL);
  xffl_state_destroy(st);
}

static void test_create_device_mesh_invalid(void **state) {
  (void)state;
  int buf[8];
  size_t len = 99;
  const int zero[] = {2, 0}, negative[] = {-1}, huge[] = {65536, 65536};
  assert_xffl_status(xffl_create_device_mesh(zero, 2, buf, 8, &len), XFFL_EINVAL);
  assert_xffl_status(xffl_create_device_mesh(negative, 1, buf, 8, &len), XFFL_EINVAL);
  assert_xffl_status(xffl_create_device_mesh(zero, 0, buf, 8, &len), XFFL_EINVAL);
  assert_int_equal(len, 99);
  assert_xffl_status(xffl_create_device_mesh(huge, 2, buf, 8, &len), XFFL_EINVAL); /* more ranks than an int */
}

/* Unknown enum values are in test_unknown_enums.c, each call in its own process. */

/* ---------------------------------------------------------------- status strings, messages, version */

static void test_status_strings(void **state) {
  (void)state;
  const struct {
    xffl_status_t status;
    const char *name;
  } all[] = {{XFFL_OK, "XFFL_OK"},
             {XFFL_EINVAL, "XFFL_EINVAL"},
             {XFFL_ESTATE, "XFFL_ESTATE"},
             {XFFL_ENOTSET, "XFFL_ENOTSET"},
             {XFFL_ENOMEM, "XFFL_ENOMEM"},
             {XFFL_EUNSUPPORTED, "XFFL_EUNSUPPORTED"},
             {XFFL_ETIMEOUT, "XFFL_ETIMEOUT"},
             {XFFL_EPEER, "XFFL_EPEER"},
             {XFFL_EAUTH, "XFFL_EAUTH"},
             {XFFL_ENETWORK, "XFFL_ENETWORK"},
             {XFFL_EBACKEND, "XFFL_EBACKEND"},
             {XFFL_EBUFSIZE, "XFFL_EBUFSIZE"},
             {XFFL_EINTERNAL, "XFFL_EINTERNAL"},
             {XFFL_EQUORUM, "XFFL_EQUORUM"}};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) {
    const char *text = xffl_status_string(all[i].status);
    assert_non_null(text);
    size_t n = strlen(all[i].name);
    if (strncmp(text, all[i].name, n) != 0 || text[n] != ':' || strlen(text) < n + 3)
      fail_msg("status %d: '%s' does not read '%s: <meaning>'", all[i].status, text, all[i].name);
    for (size_t j = 0; j < i; ++j) assert_string_not_equal(text, xffl_status_string(all[j].status));
  }
  const int unknown[] = {1, 7, -14}; /* far-off values: test_unknown_enums.c */
  for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; ++i)
    assert_string_equal(xffl_status_string((xffl_status_t)unknown[i]), "XFFL_UNKNOWN: unknown status");
}

static void test_version(void **state) {
  (void)state;
  int major = -1, minor = -1, patch = -1;
  xffl_version(&major, &minor, &patch);
  assert_int_equal(major, XFFL_VERSION_MAJOR);
  assert_int_equal(minor, XFFL_VERSION_MINOR);
  assert_int_equal(patch, XFFL_VERSION_PATCH);
  xffl_version(NULL, NULL, NULL); /* each output may be NULL */
  int only_minor = -1;
  xffl_version(NULL, &only_minor, NULL);
  assert_int_equal(only_minor, XFFL_VERSION_MINOR);
  char expected[32];
  snprintf(expected, sizeof expected, "%d.%d.%d", XFFL_VERSION_MAJOR, XFFL_VERSION_MINOR, XFFL_VERSION_PATCH);
  assert_non_null(xffl_version_string());
  assert_string_equal(xffl_version_string(), expected);
}

/* Two threads fail in turn with different messages; each keeps its own. */
typedef struct {
  pthread_barrier_t *barrier;
  int which;
  int fresh_was_empty; /* the message of a thread that has not failed yet is "" */
  char seen_before[256], seen_after[256];
} thread_job;

static void *thread_main(void *arg) {
  thread_job *job = arg;
  const char *fresh = xffl_last_error_message();
  job->fresh_was_empty = fresh && fresh[0] == '\0';
  pthread_barrier_wait(job->barrier);
  if (job->which == 0) {
    xffl_set_hsdp(NULL, 2); /* "st is NULL" */
    snprintf(job->seen_before, sizeof job->seen_before, "%s", xffl_last_error_message());
    pthread_barrier_wait(job->barrier); /* 1: thread 0 failed */
    pthread_barrier_wait(job->barrier); /* 2: thread 1 failed */
  } else {
    pthread_barrier_wait(job->barrier); /* 1 */
    int shape[1] = {0};
    size_t len = 0;
    xffl_create_device_mesh(shape, 1, NULL, 0, &len); /* "mesh extent 0" */
    snprintf(job->seen_before, sizeof job->seen_before, "%s", xffl_last_error_message());
    pthread_barrier_wait(job->barrier); /* 2 */
  }
  snprintf(job->seen_after, sizeof job->seen_after, "%s", xffl_last_error_message());
  return NULL;
}

static void test_last_error_is_thread_local(void **state) {
  (void)state;
  assert_non_null(xffl_last_error_message());
  /* A failure leaves a message; a success afterwards leaves it unchanged. */
  assert_xffl_status(xffl_set_fsdp(NULL), XFFL_EINVAL);
  char before[256];
  snprintf(before, sizeof before, "%s", xffl_last_error_message());
  assert_true(before[0] != '\0');
  xffl_state_t *st = api_global_state(2, 0);
  assert_xffl_ok(xffl_set_fsdp(st));
  assert_string_equal(xffl_last_error_message(), before);
  xffl_state_destroy(st);

  pthread_barrier_t barrier;
  assert_int_equal(pthread_barrier_init(&barrier, NULL, 2), 0);
  thread_job jobs[2];
  pthread_t threads[2];
  for (int i = 0; i < 2; ++i) {
    memset(&jobs[i], 0, sizeof jobs[i]);
    jobs[i].barrier = &barrier;
    jobs[i].which = i;
    assert_int_equal(pthread_create(&threads[i], NULL, thread_main, &jobs[i]), 0);
  }
  for (int i = 0; i < 2; ++i) assert_int_equal(pthread_join(threads[i], NULL), 0);
  pthread_barrier_destroy(&barrier);
  for (int i = 0; i < 2; ++i) {
    assert_true(jobs[i].fresh_was_empty);
    assert_true(jobs[i].seen_before[0] != '\0');
    assert_string_equal(jobs[i].seen_before, jobs[i].seen_after);
  }
  assert_string_not_equal(jobs[0].seen_before, jobs[1].seen_before);
  assert_true(api_has_word(jobs[0].seen_before, "st"));
  /* and this thread's message is still its own */
  assert_string_equal(xffl_last_error_message(), before);
}

/* ---------------------------------------------------------------- outputs only on success, destroys */

static void test_outputs_written_only_on_success(void **state) {
  (void)state;
  xffl_state_t *st = api_global_state(4, 1);
  int value = SENTINEL;
  size_t len = 4242, ndim = 4242;
  int shape[2] = {SENTINEL, SENTINEL}, buf[8];
  xffl_group_t *sentinel_group = (xffl_group_t *)(uintptr_t)0x1234, *g = sentinel_group;

  assert_xffl_status(xffl_get_int(st, XFFL_ATTR_REPLICA_RANK, &value), XFFL_ENOTSET);
  assert_int_equal(value, SENTINEL);
  assert_xffl_status(xffl_get_ints(st, XFFL_ATTR_FEDERATED_LOCAL_SIZE, buf, 8, &len), XFFL_ENOTSET);
  assert_int_equal(len, 4242);
  assert_xffl_status(xffl_get_group(st, XFFL_GROUP_FEDERATED, 0, &g), XFFL_ENOTSET);
  assert_ptr_equal(g, sentinel_group);
  assert_xffl_status(xffl_get_group(st, XFFL_GROUP_WORLD, 5, &g), XFFL_EINVAL);
  assert_ptr_equal(g, sentinel_group);
  assert_xffl_status(xffl_get_mesh(st, XFFL_MESH_HSDP, shape, 2, &ndim, buf, 8, &len), XFFL_ENOTSET);
  assert_true(shape[0] == SENTINEL && ndim == 4242 && len == 4242);
  const int not_member[] = {0, 2};
  assert_xffl_status(xffl_create_process_group(st, not_member, 2, "x", &g), XFFL_EINVAL);
  assert_ptr_equal(g, sentinel_group);
  assert_xffl_status(xffl_get_option(st, XFFL_OPT_TIMEOUT_MS, NULL), XFFL_EINVAL);
  xffl_state_destroy(st);

  setenv("XFFL_TIMEOUT", "not-a-number", 1);
  xffl_state_t *out = (xffl_state_t *)(uintptr_t)0x5678;
  assert_xffl_status(xffl_state_create(&out), XFFL_EINVAL);
  assert_ptr_equal(out, (xffl_state_t *)(uintptr_t)0x5678);
  clear_env();
}

/* A borrowed group ends with its layout: a collective on a handle kept past xffl_unset_* is
 * XFFL_ESTATE naming the call that ended it (never a read of freed memory), also once a new layout
 * is set; its members and description still read as they were. */
static void test_borrowed_group_after_its_layout(void **state) {
  (void)state;
  xffl_state_t *st = api_global_state(1, 0);
  assert_xffl_ok(xffl_set_hsdp(st, 1));
  xffl_group_t *shard = NULL, *replica = NULL;
  assert_xffl_ok(xffl_get_group(st, XFFL_GROUP_HSDP_SHARD, 0, &shard));
  assert_xffl_ok(xffl_get_group(st, XFFL_GROUP_HSDP_REPLICA, 0, &replica));
  float one = 1, out = 0;
  assert_xffl_ok(xffl_allreduce(shard, &one, &out, 1, XFFL_F32, XFFL_SUM, NULL)); /* alive: a local copy */
  assert_true(out == 1);
  assert_xffl_ok(xffl_unset_hsdp(st));
  assert_xffl_status(xffl_allreduce(shard, &one, &out, 1, XFFL_F32, XFFL_SUM, NULL), XFFL_ESTATE);
  api_expect_message_contains("ended with xffl_unset_hsdp", "collective on a retired group");
  assert_xffl_ok(xffl_set_fsdp(st));
  assert_xffl_status(xffl_barrier(replica), XFFL_ESTATE);
  api_expect_message_contains("ended with xffl_unset_hsdp", "barrier on a retired group");
  int size = 0;
  assert_xffl_ok(xffl_group_size(shard, &size));
  assert_int_equal(size, 1);
  xffl_state_destroy(st);
}

static void test_destroys(void **state) {
  (void)state;
  xffl_state_destroy(NULL);
  xffl_group_destroy(NULL);
  xffl_state_t *st = api_global_state(4, 2);
  assert_xffl_ok(xffl_set_hsdp(st, 2));
  /* Destroying a borrowed group is ignored: it keeps working and its state destroys it later. */
  xffl_group_t *borrowed = NULL;
  assert_xffl_ok(xffl_get_group(st, XFFL_GROUP_HSDP_SHARD, 0, &borrowed));
  xffl_group_destroy(borrowed);
  xffl_group_destroy(borrowed);
  api_expect_group(st, XFFL_GROUP_HSDP_SHARD, 0, "2,3", "after destroying a borrowed group");
  int size = 0;
  assert_xffl_ok(xffl_group_size(borrowed, &size));
  assert_int_equal(size, 2);
  /* An owned group survives layout changes (only its state's end bounds it). */
  const int ranks[] = {2, 0};
  xffl_group_t *owned = NULL;
  assert_xffl_ok(xffl_create_process_group(st, ranks, 2, "pair", &owned));
  assert_xffl_ok(xffl_unset_hsdp(st));
  assert_xffl_ok(xffl_set_fsdp(st));
  int members[2], rank = -1;
  assert_int_equal(api_group_members(owned, members, 2, "owned"), 2);
  assert_true(members[0] == 0 && members[1] == 2); /* sorted, as torch's new_group */
  assert_xffl_ok(xffl_group_rank(owned, &rank));
  assert_int_equal(rank, 1);
  xffl_group_destroy(owned);
  xffl_state_destroy(st);
}

/* ---------------------------------------------------------------- process groups */

static void test_create_process_group(void **state) {
  (void)state;
  xffl_state_t *st = api_global_state(4, 2);
  xffl_group_t *sentinel_group = (xffl_group_t *)(uintptr_t)0x99, *g = sentinel_group;
  const struct {
    int ranks[4];
    size_t n;
    const char *what;
  } bad[] = {{{0, 1}, 2, "caller not a member"}, {{2, 2}, 2, "duplicate"},      {{2, 3, 2}, 3, "duplicate"},
             {{2, 4}, 2, "rank == world"},       {{-1, 2}, 2, "negative rank"}, {{2}, 0, "no ranks"}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    xffl_status_t rc = xffl_create_process_group(st, bad[i].ranks, bad[i].n, "bad", &g);
    if (rc != XFFL_EINVAL)
      fail_msg("create_process_group (%s) returned %s, expected XFFL_EINVAL", bad[i].what, xffl_status_string(rc));
    assert_ptr_equal(g, sentinel_group);
  }

  const int ranks[] = {3, 0, 2};
  assert_xffl_ok(xffl_create_process_group(st, ranks, 3, "my trio", &g));
  assert_ptr_not_equal(g, sentinel_group);
  int size = 0, rank = -1, members[3];
  assert_xffl_ok(xffl_group_size(g, &size));
  assert_int_equal(size, 3);
  assert_xffl_ok(xffl_group_rank(g, &rank));
  assert_int_equal(rank, 1); /* the group's order is the sorted one (torch's new_group): 0, 2, 3 */
  assert_int_equal(api_group_members(g, members, 3, "trio"), 3);
  const int sorted[] = {0, 2, 3};
  assert_memory_equal(members, sorted, sizeof sorted);
  assert_string_equal(xffl_group_description(g), "my trio");

  /* NULL description gives "custom"; the description is copied */
  char description[] = "temporary";
  xffl_group_t *unnamed = NULL, *copied = NULL;
  const int solo[] = {2};
  assert_xffl_ok(xffl_create_process_group(st, solo, 1, NULL, &unnamed));
  assert_string_equal(xffl_group_description(unnamed), "custom");
  assert_xffl_ok(xffl_create_process_group(st, solo, 1, description, &copied));
  description[0] = 'X';
  assert_string_equal(xffl_group_description(copied), "temporary");
  assert_ptr_not_equal(unnamed, copied);

  xffl_group_destroy(g);
  xffl_group_destroy(unnamed);
  xffl_group_destroy(copied);
  xffl_state_destroy(st);
}

/* ---------------------------------------------------------------- collectives of backend NONE */

static const xffl_dtype_t all_dtypes[] = {XFFL_F32, XFFL_F64, XFFL_F16, XFFL_BF16,
                                          XFFL_I8,  XFFL_U8,  XFFL_I32, XFFL_I64};
static const size_t dtype_bytes[] = {4, 8, 2, 2, 1, 1, 4, 8};
static const xffl_redop_t all_ops[] = {XFFL_SUM, XFFL_AVG, XFFL_MIN, XFFL_MAX, XFFL_PROD};

/* Over one member every collective is the identity: out of place copies, in place leaves the bytes. */
static void check_one_member_group(xffl_group_t *g, int my_rank, const char *ctx) {
  enum { COUNT = 5 };
  unsigned char send[COUNT * 8 + 8], recv[COUNT * 8 + 8], keep[COUNT * 8 + 8]; /* + a guard */
  for (size_t i = 0; i < sizeof send; ++i) send[i] = (unsigned char)(0x30 + i % 7); /* finite in every float type */
  for (size_t d = 0; d < sizeof all_dtypes / sizeof all_dtypes[0]; ++d) {
    const size_t bytes = COUNT * dtype_bytes[d];
    for (size_t o = 0; o < sizeof all_ops / sizeof all_ops[0]; ++o) {
      memset(recv, 0xEE, sizeof recv);
      assert_xffl_ok(xffl_allreduce(g, send, recv, COUNT, all_dtypes[d], all_ops[o], NULL));
      if (memcmp(send, recv, bytes) != 0) fail_msg("%s: allreduce dtype %zu op %zu does not copy", ctx, d, o);
      assert_int_equal(recv[bytes], 0xEE);
      memcpy(keep, send, sizeof keep);
      memcpy(recv, send, sizeof recv);
      assert_xffl_ok(xffl_allreduce(g, recv, recv, COUNT, all_dtypes[d], all_ops[o], NULL));
      if (memcmp(recv, keep, sizeof keep) != 0) fail_msg("%s: in-place allreduce changed the data", ctx);
      memset(recv, 0xEE, sizeof recv);
      assert_xffl_ok(xffl_reduce_scatter(g, send, recv, COUNT, all_dtypes[d], all_ops[o], NULL));
      if (memcmp(send, recv, bytes) != 0) fail_msg("%s: reduce_scatter dtype %zu op %zu does not copy", ctx, d, o);
    }
    memset(recv, 0xEE, sizeof recv);
    assert_xffl_ok(xffl_allgather(g, send, recv, COUNT, all_dtypes[d], NULL));
    if (memcmp(send, recv, bytes) != 0) fail_msg("%s: allgather dtype %zu does not copy", ctx, d);
    assert_int_equal(recv[bytes], 0xEE);
    memcpy(recv, send, sizeof recv);
    assert_xffl_ok(xffl_allgather(g, recv, recv, COUNT, all_dtypes[d], NULL));
    if (memcmp(recv, send, sizeof recv) != 0) fail_msg("%s: in-place allgather changed the data", ctx);
    memcpy(recv, send, sizeof recv);
    assert_xffl_ok(xffl_broadcast(g, recv, COUNT, all_dtypes[d], my_rank, NULL));
    if (memcmp(recv, send, sizeof recv) != 0) fail_msg("%s: broadcast from itself changed the data", ctx);
  }
  assert_xffl_ok(xffl_barrier(g));
  /* The root must be a member. */
  assert_xffl_status(xffl_broadcast(g, recv, COUNT, XFFL_F32, my_rank + 1, NULL), XFFL_EINVAL);
  /* Host memory: the stream must be NULL. */
  int fake_stream = 0;
  assert_xffl_status(xffl_allreduce(g, send, recv, COUNT, XFFL_F32, XFFL_SUM, &fake_stream), XFFL_EINVAL);
  api_expect_message_contains("stream", ctx);
  assert_xffl_status(xffl_broadcast(g, recv, COUNT, XFFL_F32, my_rank, &fake_stream), XFFL_EINVAL);
  assert_xffl_status(xffl_allgather(g, send, recv, COUNT, XFFL_F32, &fake_stream), XFFL_EINVAL);
  assert_xffl_status(xffl_reduce_scatter(g, send, recv, COUNT, XFFL_F32, XFFL_SUM, &fake_stream), XFFL_EINVAL);
}

static void test_collectives_one_member(void **state) {
  (void)state;
  xffl_state_t *solo = api_global_state(1, 0);
  xffl_group_t *world = NULL;
  assert_xffl_ok(xffl_get_group(solo, XFFL_GROUP_WORLD, 0, &world));
  check_one_member_group(world, 0, "world of one");

  xffl_state_t *st = state_5_4_rank5();
  const int me[] = {5};
  xffl_group_t *own = NULL, *federated = NULL;
  assert_xffl_ok(xffl_create_process_group(st, me, 1, "just me", &own));
  check_one_member_group(own, 5, "created group {5}");
  /* rank 5 of 5.4 is a non-sender: its FEDERATED group is the singleton (5) */
  assert_xffl_ok(xffl_get_group(st, XFFL_GROUP_FEDERATED, 0, &federated));
  check_one_member_group(federated, 5, "singleton FEDERATED group");
  xffl_group_destroy(own);
  xffl_state_destroy(st);
  xffl_state_destroy(solo);
}

static void test_collectives_many_members_unsupported(void **state) {
  (void)state;
  xffl_state_t *st = state_5_4_rank5();
  const xffl_group_kind_t kinds[] = {XFFL_GROUP_WORLD, XFFL_GROUP_HSDP_SHARD, XFFL_GROUP_REPLICA,
                                     XFFL_GROUP_FEDERATION};
  float send[4] = {1, 2, 3, 4}, recv[64];
  for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; ++k) {
    xffl_group_t *g = NULL;
    assert_xffl_ok(xffl_get_group(st, kinds[k], 0, &g));
    const char *description = xffl_group_description(g);
    char ctx[128];
    snprintf(ctx, sizeof ctx, "backend NONE, group '%s'", description);
    for (size_t i = 0; i < 64; ++i) recv[i] = -1;
    assert_xffl_status(xffl_allreduce(g, send, recv, 4, XFFL_F32, XFFL_SUM, NULL), XFFL_EUNSUPPORTED);
    api_expect_message_contains(description, ctx);
    assert_xffl_status(xffl_broadcast(g, recv, 4, XFFL_F32, 5, NULL), XFFL_EUNSUPPORTED);
    api_expect_message_contains(description, ctx);
    assert_xffl_status(xffl_allgather(g, send, recv, 4, XFFL_F32, NULL), XFFL_EUNSUPPORTED);
    assert_xffl_status(xffl_reduce_scatter(g, recv, send, 1, XFFL_F32, XFFL_SUM, NULL), XFFL_EUNSUPPORTED);
    assert_xffl_status(xffl_barrier(g), XFFL_EUNSUPPORTED);
    api_expect_message_contains(description, ctx);
    for (size_t i = 0; i < 64; ++i) assert_true(recv[i] == -1);
    assert_true(send[0] == 1 && send[3] == 4);
  }
  xffl_state_destroy(st);
}

static void test_federated_average_one_group(void **state) {
  (void)state;
  const int sizes[] = {1};
  for (int hsdp = 0; hsdp <= 1; ++hsdp) {
    xffl_state_t *st = api_global_state(1, 0);
    assert_xffl_ok(xffl_federated_scaling(st, sizes, 1, hsdp));
    double x[3] = {1.5, -2, 8}, y[2] = {4, 5};
    void *bufs[2] = {x, y};
    size_t counts[2] = {3, 2};
    assert_xffl_ok(xffl_federated_average(st, x, 3, XFFL_F64, NULL));
    assert_true(x[0] == 1.5 && x[1] == -2 && x[2] == 8); /* the mean over one group is the value */
    assert_xffl_ok(xffl_federated_average_many(st, bufs, counts, 2, XFFL_F64, NULL));
    assert_true(x[0] == 1.5 && y[0] == 4 && y[1] == 5);
    int fake_stream = 0;
    assert_xffl_status(xffl_federated_average(st, x, 3, XFFL_F64, &fake_stream), XFFL_EINVAL);
    const double weights[] = {2.0}, two[] = {1.0, 1.0}, negative[] = {-1.0};
    assert_xffl_ok(xffl_set_federated_weights(st, weights, 1));
    assert_xffl_status(xffl_set_federated_weights(st, two, 2), XFFL_EINVAL); /* G = 1 */
    assert_xffl_status(xffl_set_federated_weights(st, negative, 1), XFFL_EINVAL);
    assert_xffl_ok(xffl_federated_average(st, x, 3, XFFL_F64, NULL));
    assert_true(x[0] == 1.5 && x[1] == -2 && x[2] == 8);
    int ints[2] = {3, 4};
    void *int_bufs[1] = {ints};
    size_t int_counts[1] = {2};
    /* weights and integers: refused on every rank, even where this rank's factor is 1 */
    assert_xffl_status(xffl_federated_average(st, ints, 2, XFFL_I32, NULL), XFFL_EINVAL);
    if (!strstr(xffl_last_error_message(), "floating-point"))
      fail_msg("message '%s' does not say why", xffl_last_error_message());
    assert_xffl_status(xffl_federated_average_many(st, int_bufs, int_counts, 1, XFFL_I32, NULL), XFFL_EINVAL);
    assert_true(ints[0] == 3 && ints[1] == 4);
    assert_xffl_ok(xffl_set_federated_weights(st, NULL, 0));
    assert_xffl_ok(xffl_federated_average(st, ints, 2, XFFL_I32, NULL));
    xffl_state_destroy(st);
  }
}

/* FLAT over unequal federated sizes is refused with the same message on every rank, before any
 * message, and after the stream check; its refusal comes before the weighted-dtype one. Rank 5 of
 * (4, 8) with HSDP 2 is a non-sender: its FEDERATED group is itself alone, so backend NONE reaches the
 * strategy's check. */
static void test_federated_flat_unequal_sizes(void **state) {
  (void)state;
  const char *flat_refusal = "strategy FLAT needs equal federated sizes (non-senders of unequal groups have no "
                             "partner across groups); use XFFL_FEDAVG_HIERARCHICAL";
  char expected[512];
  const int sizes[] = {4, 8};
  xffl_state_t *st = api_global_state(12, 5);
  assert_xffl_ok(xffl_federated_scaling(st, sizes, 2, 2));
  assert_xffl_ok(xffl_set_option(st, XFFL_OPT_FEDERATED_STRATEGY, XFFL_FEDAVG_FLAT));
  float x[4] = {1, 2, 3, 4};
  void *bufs[1] = {x};
  size_t counts[1] = {4};
  assert_xffl_status(xffl_federated_average(st, x, 4, XFFL_F32, NULL), XFFL_EINVAL);
  snprintf(expected, sizeof expected, "xffl_federated_average: %s", flat_refusal);
  assert_string_equal(xffl_last_error_message(), expected);
  assert_xffl_status(xffl_federated_average_many(st, bufs, counts, 1, XFFL_F32, NULL), XFFL_EINVAL);
  snprintf(expected, sizeof expected, "xffl_federated_average_many: %s", flat_refusal);
  assert_string_equal(xffl_last_error_message(), expected);
  assert_true(x[0] == 1 && x[3] == 4);
  int fake_stream = 0;
  assert_xffl_status(xffl_federated_average(st, x, 4, XFFL_F32, &fake_stream), XFFL_EINVAL);
  assert_string_equal(xffl_last_error_message(),
                      "xffl_federated_average: stream must be NULL for host memory (backend none takes no stream)");
  const double weights[] = {1.0, 3.0};
  int ints[2] = {3, 4};
  assert_xffl_ok(xffl_set_federated_weights(st, weights, 2));
  assert_xffl_status(xffl_federated_average(st, ints, 2, XFFL_I32, NULL), XFFL_EINVAL);
  snprintf(expected, sizeof expected, "xffl_federated_average: %s", flat_refusal);
  assert_string_equal(xffl_last_error_message(), expected);
  assert_xffl_status(xffl_set_option(st, XFFL_OPT_FEDERATED_STRATEGY, 2), XFFL_EINVAL);
  assert_string_equal(xffl_last_error_message(),
                      "xffl_set_option: federated strategy 2 is not XFFL_FEDAVG_HIERARCHICAL (0) or XFFL_FEDAVG_FLAT (1)");
  xffl_state_destroy(st);
}

/* ---------------------------------------------------------------- options and environment */

static void test_options(void **state) {
  (void)state;
  xffl_state_t *st = NULL;
  assert_xffl_ok(xffl_state_create(&st)); /* options work before set_global */
  int value = -1;
  assert_xffl_ok(xffl_get_option(st, XFFL_OPT_TIMEOUT_MS, &value));
  assert_int_equal(value, 300000);
  assert_xffl_ok(xffl_get_option(st, XFFL_OPT_FEDERATED_STRATEGY, &value));
  assert_int_equal(value, XFFL_FEDAVG_HIERARCHICAL);
  assert_xffl_ok(xffl_get_option(st, XFFL_OPT_LOG_LEVEL, &value));
  assert_int_equal(value, XFFL_LOG_WARN);
  assert_xffl_ok(xffl_get_option(st, XFFL_OPT_CROSS_FACILITY_BACKEND, &value));
  assert_int_equal(value, XFFL_BACKEND_NONE);

  const struct {
    xffl_option_t option;
    int good[3];
    int bad[3];
  } cases[] = {
      {XFFL_OPT_TIMEOUT_MS, {1, 1234, INT_MAX}, {0, -1, INT_MIN}},
      {XFFL_OPT_FEDERATED_STRATEGY, {XFFL_FEDAVG_FLAT, XFFL_FEDAVG_HIERARCHICAL, XFFL_FEDAVG_FLAT}, {2, -1, 99}},
      {XFFL_OPT_LOG_LEVEL, {XFFL_LOG_DEBUG, XFFL_LOG_ERROR, XFFL_LOG_INFO}, {4, -1, 99}},
      {XFFL_OPT_CROSS_FACILITY_BACKEND, {XFFL_BACKEND_UCX, XFFL_BACKEND_UCX, XFFL_BACKEND_NONE},
       {XFFL_BACKEND_NCCL, -1, 4}},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    for (int i = 0; i < 3; ++i) {
      assert_xffl_ok(xffl_set_option(st, cases[c].option, cases[c].good[i]));
      assert_xffl_ok(xffl_get_option(st, cases[c].option, &value));
      assert_int_equal(value, cases[c].good[i]);
    }
    for (int i = 0; i < 3; ++i) {
      assert_xffl_status(xffl_set_option(st, cases[c].option, cases[c].bad[i]), XFFL_EINVAL);
      assert_xffl_ok(xffl_get_option(st, cases[c].option, &value));
      assert_int_equal(value, cases[c].good[2]); /* unchanged by the refused value */
    }
  }
  /* and at any later stage */
  assert_xffl_ok(xffl_set_global(st, XFFL_BACKEND_NONE, XFFL_DEVICE_CPU, API_MASTER_ADDR, API_MASTER_PORT, 0, 2));
  assert_xffl_ok(xffl_set_hsdp(st, 1));
  assert_xffl_ok(xffl_set_option(st, XFFL_OPT_TIMEOUT_MS, 42));
  assert_xffl_ok(xffl_get_option(st, XFFL_OPT_TIMEOUT_MS, &value));
  assert_int_equal(value, 42);
  /* except the cross-facility backend, which xffl_set_global has read: the same value is accepted */
  assert_xffl_ok(xffl_set_option(st, XFFL_OPT_CROSS_FACILITY_BACKEND, XFFL_BACKEND_NONE));
  assert_xffl_status(xffl_set_option(st, XFFL_OPT_CROSS_FACILITY_BACKEND, XFFL_BACKEND_UCX), XFFL_ESTATE);
  if (!strstr(xffl_last_error_message(), "before it"))
    fail_msg("message '%s' does not say when to set it", xffl_last_error_message());
  assert_xffl_ok(xffl_get_option(st, XFFL_OPT_CROSS_FACILITY_BACKEND, &value));
  assert_int_equal(value, XFFL_BACKEND_NONE);
  xffl_state_destroy(st);
}

static void expect_create_refused(const char *variable, const char *text) {
  setenv(variable, text, 1);
  xffl_state_t *st = (xffl_state_t *)(uintptr_t)0x42;
  xffl_status_t rc = xffl_state_create(&st);
  unsetenv(variable);
  if (rc != XFFL_EINVAL)
    fail_msg("%s='%s': xffl_state_create returned %s, expected XFFL_EINVAL", variable, text, xffl_status_string(rc));
  assert_ptr_equal(st, (xffl_state_t *)(uintptr_t)0x42);
  if (!strstr(xffl_last_error_message(), variable))
    fail_msg("%s='%s': message '%s' does not name the variable", variable, text, xffl_last_error_message());
}

static void test_environment(void **state) {
  (void)state;
  clear_env();
  setenv("XFFL_TIMEOUT", "12", 1);
  assert_int_equal(api_option_of_new_state(XFFL_OPT_TIMEOUT_MS), 12000);
  setenv("XFFL_TIMEOUT", "3600", 1);
  assert_int_equal(api_option_of_new_state(XFFL_OPT_TIMEOUT_MS), 3600000);
  unsetenv("XFFL_TIMEOUT");
  assert_int_equal(api_option_of_new_state(XFFL_OPT_TIMEOUT_MS), 300000);
  const char *bad_timeouts[] = {"abc", "0", "-5", "12s", "1e99"};
  for (size_t i = 0; i < sizeof bad_timeouts / sizeof bad_timeouts[0]; ++i)
    expect_create_refused("XFFL_TIMEOUT", bad_timeouts[i]);

  const struct {
    const char *text;
    int level;
  } levels[] = {{"error", XFFL_LOG_ERROR}, {"warn", XFFL_LOG_WARN}, {"info", XFFL_LOG_INFO}, {"debug", XFFL_LOG_DEBUG}};
  for (size_t i = 0; i < sizeof levels / sizeof levels[0]; ++i) {
    setenv("XFFL_LOG_LEVEL", levels[i].text, 1);
    assert_int_equal(api_option_of_new_state(XFFL_OPT_LOG_LEVEL), levels[i].level);
  }
  unsetenv("XFFL_LOG_LEVEL");
  assert_int_equal(api_option_of_new_state(XFFL_OPT_LOG_LEVEL), XFFL_LOG_WARN);
  expect_create_refused("XFFL_LOG_LEVEL", "loud");
  expect_create_refused("XFFL_LOG_LEVEL", "debugging");

  setenv("XFFL_CROSS_FACILITY_BACKEND", "UCX", 1);
  assert_int_equal(api_option_of_new_state(XFFL_OPT_CROSS_FACILITY_BACKEND), XFFL_BACKEND_UCX);
  setenv("XFFL_CROSS_FACILITY_BACKEND", "none", 1);
  assert_int_equal(api_option_of_new_state(XFFL_OPT_CROSS_FACILITY_BACKEND), XFFL_BACKEND_NONE);
  expect_create_refused("XFFL_CROSS_FACILITY_BACKEND", "nccl");
  expect_create_refused("XFFL_CROSS_FACILITY_BACKEND", "infiniband");
  clear_env();
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_null_state_functions),
      cmocka_unit_test(test_null_group_and_mesh_functions),
      cmocka_unit_test(test_null_collective_and_federated_functions),
      cmocka_unit_test(test_null_output_buffers),
      cmocka_unit_test(test_calls_before_set_global),
      cmocka_unit_test(test_get_stream),
      cmocka_unit_test(test_set_global_twice),
      cmocka_unit_test(test_two_layouts_and_wrong_unset),
      cmocka_unit_test(test_federated_without_federated_scaling),
      cmocka_unit_test(test_small_buffers),
      cmocka_unit_test(test_create_device_mesh_invalid),
      cmocka_unit_test(test_status_strings),
      cmocka_unit_test(test_version),
      cmocka_unit_test(test_last_error_is_thread_local),
      cmocka_unit_test(test_outputs_written_only_on_success),
      cmocka_unit_test(test_destroys),
      cmocka_unit_test(test_borrowed_group_after_its_layout),
      cmocka_unit_test(test_create_process_group),
      cmocka_unit_test(test_collectives_one_member),
      cmocka_unit_test(test_collectives_many_members_unsupported),
      cmocka_unit_test(test_federated_average_one_group),
      cmocka_unit_test(test_federated_flat_unequal_sizes),
      cmocka_unit_test(test_options),
      cmocka_unit_test(test_environment),
  };
  return cmocka_run_group_tests_name("api.errors", tests, group_setup, NULL);
}
