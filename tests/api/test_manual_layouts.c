/* The layouts from a caller's values (xFFL's set_fsdp(mesh) and _partial_hsdp_setup_manual), through
 * libxffl.so: xffl_set_fsdp_mesh and xffl_set_hsdp_manual. Worked values, every invalid input with the
 * values it must name, and the state unchanged (its JSON description byte for byte) after each error. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_support.h"
#include "xffl_test.h"

/* The JSON description: every field, group and mesh of the state. Caller frees. */
static char *describe(const xffl_state_t *st) {
  size_t len = 0;
  assert_xffl_status(xffl_state_describe(st, XFFL_FORMAT_JSON, NULL, 0, &len), XFFL_EBUFSIZE);
  char *text = malloc(len + 1);
  assert_non_null(text);
  assert_xffl_ok(xffl_state_describe(st, XFFL_FORMAT_JSON, text, len + 1, &len));
  return text;
}

static void expect_unchanged(const xffl_state_t *st, const char *before, const char *ctx) {
  char *after = describe(st);
  if (strcmp(before, after) != 0) fail_msg("%s changed the state:\nbefore %s\nafter  %s", ctx, before, after);
  free(after);
}

/* W = 12, rank 5 gives a mesh in any order: the group and fsdp_mesh are the sorted ranks. */
static void test_fsdp_mesh_worked(void **state) {
  (void)state;
  xffl_state_t *st = api_global_state(12, 5);
  const int mesh[] = {9, 5, 7, 11};
  assert_xffl_ok(xffl_set_fsdp_mesh(st, mesh, 4));
  assert_int_equal(xffl_is_fsdp_setup(st), 1);
  assert_int_equal(xffl_is_hsdp_setup(st), 0);
  assert_int_equal(xffl_is_federated_scaling_setup(st), 0);
  api_expect_mesh(st, XFFL_MESH_FSDP, "4:5,7,9,11", "fsdp mesh {9,5,7,11}");
  api_expect_mesh(st, XFFL_MESH_HSDP, NULL, "fsdp mesh {9,5,7,11}");
  xffl_group_t *g = api_expect_group(st, XFFL_GROUP_FSDP, 0, "5,7,9,11", "fsdp mesh {9,5,7,11}");
  int my = -1;
  assert_xffl_ok(xffl_group_rank(g, &my));
  assert_int_equal(my, 0);
  api_expect_group(st, XFFL_GROUP_WORLD, 0, "0-11", "fsdp mesh: world stays");
  api_expect_group(st, XFFL_GROUP_HSDP_REPLICA, 0, NULL, "fsdp mesh");
  api_expect_group(st, XFFL_GROUP_FEDERATED, 0, NULL, "fsdp mesh");
  api_expect_int(st, XFFL_ATTR_REPLICA_RANK, API_NONE, "fsdp mesh");

  /* The text form shows torch's DeviceMesh of those ranks. */
  char text[4096];
  size_t len = 0;
  assert_xffl_ok(xffl_state_describe(st, XFFL_FORMAT_TEXT, text, sizeof text, &len));
  if (!strstr(text, "DeviceMesh('cpu', [5, 7, 9, 11], mesh_dim_names=('shard',))"))
    fail_msg("describe lacks the caller's fsdp mesh:\n%s", text);

  /* Another layout needs unset first; after unset a different mesh (consecutive ranks) works. */
  assert_xffl_status(xffl_set_hsdp(st, 2), XFFL_ESTATE);
  assert_xffl_status(xffl_unset_hsdp(st), XFFL_ESTATE);
  assert_xffl_ok(xffl_unset_fsdp(st));
  assert_int_equal(xffl_is_fsdp_setup(st), 0);
  api_expect_mesh(st, XFFL_MESH_FSDP, NULL, "after unset_fsdp");
  const int block[] = {4, 5, 6, 7};
  assert_xffl_ok(xffl_set_fsdp_mesh(st, block, 4));
  api_expect_mesh(st, XFFL_MESH_FSDP, "4:4-7", "fsdp mesh 4-7");
  assert_xffl_ok(xffl_unset_fsdp(st));

  /* A mesh of one rank, and of the whole world (then it equals xffl_set_fsdp). */
  const int alone[] = {5};
  assert_xffl_ok(xffl_set_fsdp_mesh(st, alone, 1));
  api_expect_mesh(st, XFFL_MESH_FSDP, "1:5", "fsdp mesh {5}");
  api_expect_group(st, XFFL_GROUP_FSDP, 0, "5", "fsdp mesh {5}");
  assert_xffl_ok(xffl_unset_fsdp(st));
  int world[12];
  for (int i = 0; i < 12; ++i) world[i] = 11 - i;
  assert_xffl_ok(xffl_set_fsdp_mesh(st, world, 12));
  char *custom = describe(st);
  assert_xffl_ok(xffl_unset_fsdp(st));
  assert_xffl_ok(xffl_set_fsdp(st));
  expect_unchanged(st, custom, "xffl_set_fsdp against the whole-world mesh");
  free(custom);
  xffl_state_destroy(st);
}

/* Every member computes the same group from the same set, whatever order each lists it in. */
static void test_fsdp_mesh_members_agree(void **state) {
  (void)state;
  const int orders[3][3] = {{2, 6, 10}, {10, 2, 6}, {6, 10, 2}};
  for (int m = 0; m < 3; ++m) {
    const int r = orders[0][m];
    xffl_state_t *st = api_global_state(12, r);
    assert_xffl_ok(xffl_set_fsdp_mesh(st, orders[m], 3));
    char ctx[64];
    snprintf(ctx, sizeof ctx, "rank %d", r);
    xffl_group_t *g = api_expect_group(st, XFFL_GROUP_FSDP, 0, "2,6,10", ctx);
    int my = -1;
    assert_xffl_ok(xffl_group_rank(g, &my));
    assert_int_equal(my, m);
    xffl_state_destroy(st);
  }
}

static void expect_fsdp_mesh_refused(xffl_state_t *st, const int *ranks, size_t n, xffl_status_t status,
                                     const char *needle, const char *ctx) {
  char *before = describe(st);
  assert_xffl_status(xffl_set_fsdp_mesh(st, ranks, n), status);
  api_expect_message_contains(needle, ctx);
  expect_unchanged(st, before, ctx);
  free(before);
}

static void test_fsdp_mesh_invalid(void **state) {
  (void)state;
  xffl_state_t *st = api_global_state(8, 3);
  const int dup[] = {3, 1, 3};
  const int outside[] = {3, 8};
  const int negative[] = {-1, 3};
  const int not_member[] = {0, 1, 2};
  const int ok[] = {3, 2};
  expect_fsdp_mesh_refused(st, dup, 3, XFFL_EINVAL, "rank 3 appears twice", "duplicate");
  expect_fsdp_mesh_refused(st, outside, 2, XFFL_EINVAL, "rank 8 of the fsdp mesh outside [0, 8)", "outside");
  expect_fsdp_mesh_refused(st, negative, 2, XFFL_EINVAL, "rank -1 of the fsdp mesh outside [0, 8)", "negative");
  expect_fsdp_mesh_refused(st, not_member, 3, XFFL_EINVAL, "rank 3 is not in the fsdp mesh [0, 1, 2]", "not member");
  expect_fsdp_mesh_refused(st, ok, 0, XFFL_EINVAL, "n is 0", "n = 0");
  expect_fsdp_mesh_refused(st, NULL, 2, XFFL_EINVAL, "ranks is NULL", "NULL ranks");
  assert_xffl_status(xffl_set_fsdp_mesh(NULL, ok, 2), XFFL_EINVAL);
  api_expect_message_contains("st is NULL", "NULL state");

  /* Out of order: a layout already set, or no set_global. */
  assert_xffl_ok(xffl_set_hsdp(st, 2));
  expect_fsdp_mesh_refused(st, ok, 2, XFFL_ESTATE, "xffl_set_fsdp_mesh after xffl_set_hsdp", "after set_hsdp");
  xffl_state_destroy(st);
  xffl_state_t *fresh = NULL;
  assert_xffl_ok(xffl_state_create(&fresh));
  assert_xffl_status(xffl_set_fsdp_mesh(fresh, ok, 2), XFFL_ESTATE);
  api_expect_message_contains("needs xffl_set_global first", "before set_global");
  xffl_state_destroy(fresh);
}

/* xffl_set_hsdp_manual with rank r's own values equals xffl_set_hsdp(S), field for field, for 5.1 (W = 8,
 * S = 2) and the W = 12, S = 4 grid. */
static void test_hsdp_manual_equals_set_hsdp(void **state) {
  (void)state;
  const int cases[][2] = {{8, 2}, {12, 4}, {12, 1}, {6, 6}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    const int world = cases[c][0], s = cases[c][1];
    for (int r = 0; r < world; ++r) {
      xffl_state_t *manual = api_global_state(world, r);
      xffl_state_t *plain = api_global_state(world, r);
      const int replicas[] = {world / s};
      assert_xffl_ok(xffl_set_hsdp_manual(manual, r % s, s, r / s, replicas, 1));
      assert_xffl_ok(xffl_set_hsdp(plain, s));
      char *expected = describe(plain);
      char ctx[96];
      snprintf(ctx, sizeof ctx, "W=%d S=%d rank %d: set_hsdp_manual against set_hsdp", world, s, r);
      expect_unchanged(manual, expected, ctx);
      free(expected);
      assert_int_equal(xffl_is_hsdp_setup(manual), 1);
      assert_xffl_status(xffl_unset_fsdp(manual), XFFL_ESTATE);
      assert_xffl_ok(xffl_unset_hsdp(manual));
      assert_int_equal(xffl_is_hsdp_setup(manual), 0);
      xffl_state_destroy(manual);
      xffl_state_destroy(plain);
    }
  }
  /* 5.1, rank 5: rl 1, rr 2, replica-dim peers 1,3,5,7, shard-dim peers 4,5. */
  xffl_state_t *st = api_global_state(8, 5);
  const int four[] = {4};
  assert_xffl_ok(xffl_set_hsdp_manual(st, 1, 2, 2, four, 1));
  api_expect_int(st, XFFL_ATTR_REPLICA_LOCAL_RANK, 1, "5.1 r5");
  api_expect_int(st, XFFL_ATTR_REPLICA_RANK, 2, "5.1 r5");
  api_expect_int(st, XFFL_ATTR_REPLICA_LOCAL_SIZE, 2, "5.1 r5");
  api_expect_int(st, XFFL_ATTR_HSDP, 2, "5.1 r5");
  api_expect_ints(st, XFFL_ATTR_REPLICA_WORLD_SIZE, "4", "5.1 r5");
  api_expect_mesh(st, XFFL_MESH_HSDP, "4,2:0-7", "5.1 r5");
  api_expect_mesh(st, XFFL_MESH_FSDP, NULL, "5.1 r5");
  api_expect_group(st, XFFL_GROUP_HSDP_REPLICA, 0, "1,3,5,7", "5.1 r5");
  api_expect_group(st, XFFL_GROUP_HSDP_SHARD, 0, "4,5", "5.1 r5");
  api_expect_group(st, XFFL_GROUP_FEDERATED, 0, NULL, "5.1 r5");
  xffl_state_destroy(st);
}

typedef struct {
  int rl, rls, rr;
  int rws[3];
  size_t n;
  const char *needle;
} manual_case;

static void test_hsdp_manual_invalid(void **state) {
  (void)state;
  /* W = 8, rank 5: the right values are (1, 2, 2, (4,)). Each case changes one of them. */
  const manual_case cases[] = {
      {1, 0, 2, {4}, 1, "replica_local_size 0 must be at least 1"},
      {1, -2, 2, {4}, 1, "replica_local_size -2 must be at least 1"},
      {2, 2, 2, {4}, 1, "replica_local_rank 2 outside [0, 2)"},
      {-1, 2, 2, {4}, 1, "replica_local_rank -1 outside [0, 2)"},
      {1, 2, 2, {4, 4}, 2, "replica_world_size has 2 entries"},
      {1, 3, 2, {2}, 1, "replica_local_size 3 does not divide world size 8"},
      {1, 2, 2, {3}, 1, "replica_world_size (3,) is not world size 8 / replica_local_size 2 = 4"},
      {1, 2, 4, {4}, 1, "replica_rank 4 outside [0, 4)"},
      {1, 2, -1, {4}, 1, "replica_rank -1 outside [0, 4)"},
      {0, 2, 2, {4}, 1, "replica_local_rank 0 is not rank 5 mod replica_local_size 2 = 1"},
      {1, 2, 1, {4}, 1, "replica_rank 1 is not rank 5 / replica_local_size 2 = 2"},
  };
  xffl_state_t *st = api_global_state(8, 5);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    const manual_case *c = &cases[i];
    char *before = describe(st);
    char ctx[160];
    snprintf(ctx, sizeof ctx, "case %zu (%d, %d, %d, n %zu)", i, c->rl, c->rls, c->rr, c->n);
    assert_xffl_status(xffl_set_hsdp_manual(st, c->rl, c->rls, c->rr, c->rws, c->n), XFFL_EINVAL);
    api_expect_message_contains(c->needle, ctx);
    expect_unchanged(st, before, ctx);
    free(before);
  }
  /* (1, 4, 1, (2,)) is rank 5's place in the (2, 4) grid: accepted. */
  const int two[] = {2};
  assert_xffl_ok(xffl_set_hsdp_manual(st, 1, 4, 1, two, 1));
  api_expect_mesh(st, XFFL_MESH_HSDP, "2,4:0-7", "W=8 S=4 rank 5");
  api_expect_group(st, XFFL_GROUP_HSDP_SHARD, 0, "4-7", "W=8 S=4 rank 5");
  /* A layout is set: ESTATE, before any value is looked at. */
  char *before = describe(st);
  assert_xffl_status(xffl_set_hsdp_manual(st, 1, 2, 2, (const int[]){4}, 1), XFFL_ESTATE);
  api_expect_message_contains("xffl_set_hsdp_manual after xffl_set_hsdp", "layout set");
  expect_unchanged(st, before, "layout set");
  free(before);
  assert_xffl_ok(xffl_unset_hsdp(st));

  /* NULL and empty tuples, NULL state, no set_global. */
  assert_xffl_status(xffl_set_hsdp_manual(st, 1, 2, 2, NULL, 1), XFFL_EINVAL);
  api_expect_message_contains("replica_world_size is NULL", "NULL tuple");
  assert_xffl_status(xffl_set_hsdp_manual(st, 1, 2, 2, two, 0), XFFL_EINVAL);
  api_expect_message_contains("n is 0", "empty tuple");
  assert_xffl_status(xffl_set_hsdp_manual(NULL, 1, 2, 2, two, 1), XFFL_EINVAL);
  api_expect_message_contains("st is NULL", "NULL state");
  assert_int_equal(xffl_is_hsdp_setup(st), 0);
  xffl_state_destroy(st);
  xffl_state_t *fresh = NULL;
  assert_xffl_ok(xffl_state_create(&fresh));
  assert_xffl_status(xffl_set_hsdp_manual(fresh, 0, 1, 0, (const int[]){1}, 1), XFFL_ESTATE);
  xffl_state_destroy(fresh);
}

/* Federated scaling is a layout too: set_hsdp_manual after it is ESTATE (federated_scaling takes hsdp). */
static void test_hsdp_manual_after_federated_scaling(void **state) {
  (void)state;
  xffl_state_t *st = api_global_state(12, 5);
  const int sizes[] = {4, 8};
  const int replicas[] = {2, 4};
  assert_xffl_ok(xffl_federated_scaling(st, sizes, 2, 2));
  char *before = describe(st);
  assert_xffl_status(xffl_set_hsdp_manual(st, 1, 2, 0, replicas, 2), XFFL_ESTATE);
  api_expect_message_contains("call xffl_unset_federated_scaling first", "after federated scaling");
  expect_unchanged(st, before, "after federated scaling");
  free(before);
  xffl_state_destroy(st);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fsdp_mesh_worked),
      cmocka_unit_test(test_fsdp_mesh_members_agree),
      cmocka_unit_test(test_fsdp_mesh_invalid),
      cmocka_unit_test(test_hsdp_manual_equals_set_hsdp),
      cmocka_unit_test(test_hsdp_manual_invalid),
      cmocka_unit_test(test_hsdp_manual_after_federated_scaling),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
