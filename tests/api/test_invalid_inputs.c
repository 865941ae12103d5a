/* The spec's "Inputs xFFL mishandles" table (spec/xffl-examples.md) and the other invalid inputs of
 * DESIGN.md 3.4: every one fails on every rank with the stated status and words, before anything changes,
 * so the state stays usable for a valid call afterwards. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "api_support.h"
#include "xffl_test.h"

typedef struct {
  const char *name;
  int world;
  int sizes[4];
  size_t n_sizes; /* 0: the layout is set_hsdp(hsdp) instead of federated scaling */
  int hsdp;
  xffl_status_t status;
  const char *words[4]; /* each must appear in the message; NULL ends the list */
} invalid_layout;

static const invalid_layout spec_rows[] = {
    {"8, (3,3), none", 8, {3, 3}, 2, 0, XFFL_EINVAL, {"sum to 6, world is 8"}},
    {"8, (4,4,4), none", 8, {4, 4, 4}, 3, 0, XFFL_EINVAL, {"sum to 12, world is 8"}},
    {"8, (2,4), 2", 8, {2, 4}, 2, 2, XFFL_EINVAL, {"sum to 6, world is 8"}},
    {"6, (2,4), none", 6, {2, 4}, 2, 0, XFFL_EINVAL, {"unequal", "need hsdp", "hsdp 2"}},
    {"12, (4,8), 3", 12, {4, 8}, 2, 3, XFFL_EINVAL, {"hsdp 3", "does not divide", "4 and 8"}},
    {"12, 6 (symmetric), 4", 12, {6}, 1, 4, XFFL_EINVAL, {"hsdp 4", "does not divide", "6"}},
};

/* DESIGN.md 3.4's other cases: sizes <= 0, S <= 0, S not dividing W, a single size not dividing W. */
static const invalid_layout design_rows[] = {
    {"8, (0,8), none", 8, {0, 8}, 2, 0, XFFL_EINVAL, {"federated size 0"}},
    {"8, (-4,12), 2", 8, {-4, 12}, 2, 2, XFFL_EINVAL, {"federated size -4"}},
    {"8, (4,4), -2", 8, {4, 4}, 2, -2, XFFL_EINVAL, {"hsdp -2"}},
    {"8, single 3, none", 8, {3}, 1, 0, XFFL_EINVAL, {"3", "does not divide", "8"}},
    {"10, (4,6), none", 10, {4, 6}, 2, 0, XFFL_EINVAL, {"unequal", "hsdp 2"}},
    {"15, (6,9), none", 15, {6, 9}, 2, 0, XFFL_EINVAL, {"unequal", "hsdp 3"}},
    {"set_hsdp(3), W=8", 8, {0}, 0, 3, XFFL_EINVAL, {"hsdp 3", "does not divide", "8"}},
    {"set_hsdp(0), W=8", 8, {0}, 0, 0, XFFL_EINVAL, {"hsdp 0"}},
    {"set_hsdp(-1), W=8", 8, {0}, 0, -1, XFFL_EINVAL, {"hsdp -1"}},
};

/* Nothing of a layout is visible: no flags, no fields, no groups, no meshes. */
static void expect_no_layout(const xffl_state_t *st, const char *ctx) {
  assert_int_equal(xffl_is_fsdp_setup(st), 0);
  assert_int_equal(xffl_is_hsdp_setup(st), 0);
  assert_int_equal(xffl_is_federated_scaling_setup(st), 0);
  const xffl_attr_t layout_attrs[] = {XFFL_ATTR_REPLICA_LOCAL_RANK, XFFL_ATTR_REPLICA_LOCAL_SIZE,
                                      XFFL_ATTR_REPLICA_RANK,       XFFL_ATTR_FEDERATED_LOCAL_RANK,
                                      XFFL_ATTR_FEDERATED_RANK,     XFFL_ATTR_FEDERATED_WORLD_SIZE,
                                      XFFL_ATTR_IS_SENDER,          XFFL_ATTR_RECEIVE_FROM,
                                      XFFL_ATTR_HSDP};
  for (size_t i = 0; i < sizeof layout_attrs / sizeof layout_attrs[0]; ++i)
    api_expect_int(st, layout_attrs[i], API_NONE, ctx);
  api_expect_ints(st, XFFL_ATTR_REPLICA_WORLD_SIZE, NULL, ctx);
  api_expect_ints(st, XFFL_ATTR_FEDERATED_LOCAL_SIZE, NULL, ctx);
  for (int kind = XFFL_GROUP_FSDP; kind <= XFFL_GROUP_FEDERATION; ++kind)
    api_expect_group(st, (xffl_group_kind_t)kind, 0, NULL, ctx);
  api_expect_mesh(st, XFFL_MESH_FSDP, NULL, ctx);
  api_expect_mesh(st, XFFL_MESH_HSDP, NULL, ctx);
}

static void check_rows(const invalid_layout *rows, size_t n_rows) {
  for (size_t i = 0; i < n_rows; ++i) {
    const invalid_layout *row = &rows[i];
    for (int rank = 0; rank < row->world; ++rank) {
      char ctx[128];
      snprintf(ctx, sizeof ctx, "invalid input '%s', rank %d", row->name, rank);
      xffl_state_t *st = api_global_state(row->world, rank);
      xffl_status_t rc = row->n_sizes ? xffl_federated_scaling(st, row->sizes, row->n_sizes, row->hsdp)
                                      : xffl_set_hsdp(st, row->hsdp);
      if (rc != row->status)
        fail_msg("%s: returned %s, expected %s (%s)", ctx, xffl_status_string(rc), xffl_status_string(row->status),
                 xffl_last_error_message());
      for (size_t w = 0; w < 4 && row->words[w]; ++w) api_expect_message_contains(row->words[w], ctx);
      expect_no_layout(st, ctx);
      /* The state is still usable: a valid layout can follow. */
      assert_xffl_ok(xffl_set_fsdp(st));
      assert_int_equal(xffl_is_fsdp_setup(st), 1);
      api_expect_int(st, XFFL_ATTR_RANK, rank, ctx);
      xffl_state_destroy(st);
    }
  }
}

static void test_spec_table(void **state) {
  (void)state;
  check_rows(spec_rows, sizeof spec_rows / sizeof spec_rows[0]);
}

static void test_design_rules(void **state) {
  (void)state;
  check_rows(design_rows, sizeof design_rows / sizeof design_rows[0]);
}

/* The suggested hsdp of "6, (2,4), none" works: accepting it gives 5.5's layout. */
static void test_suggested_hsdp_works(void **state) {
  (void)state;
  const int sizes[] = {2, 4};
  for (int rank = 0; rank < 6; ++rank) {
    xffl_state_t *st = api_global_state(6, rank);
    assert_xffl_status(xffl_federated_scaling(st, sizes, 2, 0), XFFL_EINVAL);
    assert_xffl_ok(xffl_federated_scaling(st, sizes, 2, 2));
    api_expect_ints(st, XFFL_ATTR_REPLICA_WORLD_SIZE, "1,2", "suggested hsdp");
    xffl_state_destroy(st);
  }
}

/* "rank 5, world 4": set_global refuses it; the state stays empty and takes a valid set_global after. */
static void test_rank_outside_world(void **state) {
  (void)state;
  const struct {
    int rank, world;
    const char *words;
  } cases[] = {{5, 4, "rank 5 outside [0, 4)"}, {4, 4, "rank 4 outside [0, 4)"}, {-1, 4, "rank -1 outside [0, 4)"},
               {0, 0, "world size 0"},          {0, -3, "world size -3"}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    char ctx[96];
    snprintf(ctx, sizeof ctx, "set_global(rank %d, world %d)", cases[i].rank, cases[i].world);
    xffl_state_t *st = NULL;
    assert_xffl_ok(xffl_state_create(&st));
    assert_xffl_status(xffl_set_global(st, XFFL_BACKEND_NONE, XFFL_DEVICE_CPU, API_MASTER_ADDR, API_MASTER_PORT,
                                       cases[i].rank, cases[i].world),
                       XFFL_EINVAL);
    api_expect_message_contains(cases[i].words, ctx);
    /* unchanged: still before set_global */
    api_expect_int(st, XFFL_ATTR_RANK, API_NONE, ctx);
    api_expect_int(st, XFFL_ATTR_WORLD_SIZE, API_NONE, ctx);
    api_expect_group(st, XFFL_GROUP_WORLD, 0, NULL, ctx);
    assert_xffl_status(xffl_set_fsdp(st), XFFL_ESTATE);
    assert_xffl_ok(xffl_set_global(st, XFFL_BACKEND_NONE, XFFL_DEVICE_CPU, API_MASTER_ADDR, API_MASTER_PORT, 3, 4));
    api_expect_int(st, XFFL_ATTR_RANK, 3, ctx);
    api_expect_int(st, XFFL_ATTR_WORLD_SIZE, 4, ctx);
    xffl_state_destroy(st);
  }
}

/* "8, single value 4": a single federated size expands to (4, 4) on every rank, ranks 4-7 included. */
static void test_single_size_expands(void **state) {
  (void)state;
  const int sizes[] = {4};
  for (int hsdp = 0; hsdp <= 2; hsdp += 2)
    for (int rank = 0; rank < 8; ++rank) {
      char ctx[64];
      snprintf(ctx, sizeof ctx, "W=8 sizes {4} hsdp %d rank %d", hsdp, rank);
      xffl_state_t *st = api_global_state(8, rank);
      assert_xffl_ok(xffl_federated_scaling(st, sizes, 1, hsdp));
      api_expect_ints(st, XFFL_ATTR_FEDERATED_LOCAL_SIZE, "4,4", ctx);
      api_expect_int(st, XFFL_ATTR_FEDERATED_WORLD_SIZE, 2, ctx);
      api_expect_int(st, XFFL_ATTR_FEDERATED_RANK, rank / 4, ctx);
      api_expect_int(st, XFFL_ATTR_FEDERATED_LOCAL_RANK, rank % 4, ctx);
      api_expect_group(st, XFFL_GROUP_FEDERATION, 0, rank < 4 ? "0-3" : "4-7", ctx);
      xffl_state_destroy(st);
    }
}

/* A failed layout call after a valid one leaves the valid one in place (ESTATE, nothing changes). */
static void test_failure_keeps_existing_layout(void **state) {
  (void)state;
  const int good[] = {4, 8}, bad[] = {3, 3};
  xffl_state_t *st = api_global_state(12, 5);
  assert_xffl_ok(xffl_federated_scaling(st, good, 2, 2));
  assert_xffl_status(xffl_federated_scaling(st, bad, 2, 0), XFFL_ESTATE);
  assert_xffl_ok(xffl_unset_federated_scaling(st));
  assert_xffl_status(xffl_federated_scaling(st, bad, 2, 0), XFFL_EINVAL);
  expect_no_layout(st, "after a refused federated_scaling");
  assert_xffl_ok(xffl_federated_scaling(st, good, 2, 2));
  api_expect_int(st, XFFL_ATTR_RECEIVE_FROM, 7, "5.4 rank 5 after a refused call");
  api_expect_group(st, XFFL_GROUP_FEDERATED, 0, "5", "5.4 rank 5 after a refused call");
  xffl_state_destroy(st);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_spec_table),           cmocka_unit_test(test_design_rules),
      cmocka_unit_test(test_suggested_hsdp_works), cmocka_unit_test(test_rank_outside_world),
      cmocka_unit_test(test_single_size_expands),  cmocka_unit_test(test_failure_keeps_existing_layout),
  };
  return cmocka_run_group_tests_name("api.invalid_inputs", tests, NULL, NULL);
}
