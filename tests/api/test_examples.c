/* Every field of every rank of every worked table of spec/xffl-examples.md (5.1 .. 5.7) and DESIGN.md 3.3,
 * planned rank by rank through the public C API with backend NONE. Each table is data; one loop checks it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "api_support.h"
#include "xffl_test.h"

#define N API_NONE

typedef struct {
  int r;
  int fl, f, rl, rr;   /* N where Python holds None */
  int is_sender;       /* 1, 0 or N */
  int receive_from;    /* N for None */
  const char *fg;      /* FEDERATED members; NULL: no such group */
  const char *rg;      /* replica-dim (HSDP_REPLICA) members; also REPLICA with federation and HSDP */
  const char *shard;   /* shard-dim (HSDP_SHARD) members */
  const char *fed;     /* FEDERATION members */
  int node_local_rank, node_rank; /* used only by tables with a node size */
} example_row;

typedef enum { LAYOUT_FSDP, LAYOUT_HSDP, LAYOUT_FEDERATED } layout_kind;

typedef struct {
  const char *name;
  int world;
  int node_size; /* 0: xffl_set_node is not called */
  int streams;   /* 0: xffl_set_exec_device is not called */
  layout_kind layout;
  int hsdp; /* set_hsdp argument, or federated_scaling's hsdp (0: none) */
  int sizes[4];
  size_t n_sizes;
  int replica_local_size;
  const char *replica_world_size, *federated_local_size; /* NULL: None */
  int federated_world_size;
  const char *fsdp_mesh[3]; /* "SHAPE:RANKS" by federated rank (index 0 without federation); NULL: None */
  const char *hsdp_mesh[3];
  const example_row *rows;
  size_t n_rows;
} example_table;

#define ROWS(array) array, sizeof(array) / sizeof(array[0])

/* 5.1: W = 8, no federation, set_hsdp(2). */
static const example_row rows_5_1[] = {
    {0, N, N, 0, 0, N, N, NULL, "0,2,4,6", "0,1", NULL, 0, 0}, {1, N, N, 1, 0, N, N, NULL, "1,3,5,7", "0,1", NULL, 0, 0},
    {2, N, N, 0, 1, N, N, NULL, "0,2,4,6", "2,3", NULL, 0, 0}, {3, N, N, 1, 1, N, N, NULL, "1,3,5,7", "2,3", NULL, 0, 0},
    {4, N, N, 0, 2, N, N, NULL, "0,2,4,6", "4,5", NULL, 0, 0}, {5, N, N, 1, 2, N, N, NULL, "1,3,5,7", "4,5", NULL, 0, 0},
    {6, N, N, 0, 3, N, N, NULL, "0,2,4,6", "6,7", NULL, 0, 0}, {7, N, N, 1, 3, N, N, NULL, "1,3,5,7", "6,7", NULL, 0, 0},
};
static const example_table table_5_1 = {
    "5.1 W=8 hsdp=2", 8, 0, 0, LAYOUT_HSDP, 2, {0}, 0, 2, "4", NULL, N, {NULL}, {"4,2:0-7"}, ROWS(rows_5_1)};

/* 5.1 note: plain FSDP, W = 8. */
static const example_row rows_fsdp[] = {
    {0, N, N, N, N, N, N, NULL, NULL, NULL, NULL, 0, 0}, {1, N, N, N, N, N, N, NULL, NULL, NULL, NULL, 0, 0},
    {2, N, N, N, N, N, N, NULL, NULL, NULL, NULL, 0, 0}, {3, N, N, N, N, N, N, NULL, NULL, NULL, NULL, 0, 0},
    {4, N, N, N, N, N, N, NULL, NULL, NULL, NULL, 0, 0}, {5, N, N, N, N, N, N, NULL, NULL, NULL, NULL, 0, 0},
    {6, N, N, N, N, N, N, NULL, NULL, NULL, NULL, 0, 0}, {7, N, N, N, N, N, N, NULL, NULL, NULL, NULL, 0, 0},
};
static const example_table table_fsdp = {
    "5.1 plain FSDP W=8", 8, 0, 0, LAYOUT_FSDP, 0, {0}, 0, N, NULL, NULL, N, {"8:0-7"}, {NULL}, ROWS(rows_fsdp)};

/* 5.2: W = 8, federated = 4 -> (4,4), hsdp = 2. */
static const example_row rows_5_2[] = {
    {0, 0, 0, 0, 0, 1, N, "0,4", "0,2", "0,1", "0-3", 0, 0}, {1, 1, 0, 1, 0, 0, 3, "1,5", "1,3", "0,1", "0-3", 0, 0},
    {2, 2, 0, 0, 1, 0, 0, "2,6", "0,2", "2,3", "0-3", 0, 0}, {3, 3, 0, 1, 1, 1, N, "3,7", "1,3", "2,3", "0-3", 0, 0},
    {4, 0, 1, 0, 0, 1, N, "0,4", "4,6", "4,5", "4-7", 0, 0}, {5, 1, 1, 1, 0, 0, 7, "1,5", "5,7", "4,5", "4-7", 0, 0},
    {6, 2, 1, 0, 1, 0, 4, "2,6", "4,6", "6,7", "4-7", 0, 0}, {7, 3, 1, 1, 1, 1, N, "3,7", "5,7", "6,7", "4-7", 0, 0},
};
static const example_table table_5_2 = {"5.2 W=8 federated=4 hsdp=2", 8, 0, 0, LAYOUT_FEDERATED, 2, {4}, 1, 2, "2,2",
                                        "4,4", 2, {NULL}, {"2,2:0-3", "2,2:4-7"}, ROWS(rows_5_2)};
/* 5.2 with streams = 3: the only change is 3 instances of FEDERATED and REPLICA (same members). */
static const example_table table_5_2_streams = {"5.2 W=8 federated=(4,4) hsdp=2 streams=3", 8, 0, 3,
                                                LAYOUT_FEDERATED, 2, {4, 4}, 2, 2, "2,2", "4,4", 2, {NULL},
                                                {"2,2:0-3", "2,2:4-7"}, ROWS(rows_5_2)};

/* 5.3: W = 8, federated = 4, no HSDP. fsdp_mesh = FED. */
static const example_row rows_5_3[] = {
    {0, 0, 0, N, N, 1, N, "0,4", NULL, NULL, "0-3", 0, 0}, {1, 1, 0, N, N, 1, N, "1,5", NULL, NULL, "0-3", 0, 0},
    {2, 2, 0, N, N, 1, N, "2,6", NULL, NULL, "0-3", 0, 0}, {3, 3, 0, N, N, 1, N, "3,7", NULL, NULL, "0-3", 0, 0},
    {4, 0, 1, N, N, 1, N, "0,4", NULL, NULL, "4-7", 0, 0}, {5, 1, 1, N, N, 1, N, "1,5", NULL, NULL, "4-7", 0, 0},
    {6, 2, 1, N, N, 1, N, "2,6", NULL, NULL, "4-7", 0, 0}, {7, 3, 1, N, N, 1, N, "3,7", NULL, NULL, "4-7", 0, 0},
};
static const example_table table_5_3 = {"5.3 W=8 federated=4 no hsdp", 8, 0, 0, LAYOUT_FEDERATED, 0, {4}, 1, N, NULL,
                                        "4,4", 2, {"4:0-3", "4:4-7"}, {NULL}, ROWS(rows_5_3)};

/* 5.4: W = 12, federated = (4,8), hsdp = 2. */
static const example_row rows_5_4[] = {
    {0, 0, 0, 0, 0, 1, N, "0,4", "0,2", "0,1", "0-3", 0, 0},
    {1, 1, 0, 1, 0, 0, 3, "(1)", "1,3", "0,1", "0-3", 0, 0},
    {2, 2, 0, 0, 1, 0, 0, "(2)", "0,2", "2,3", "0-3", 0, 0},
    {3, 3, 0, 1, 1, 1, N, "3,7", "1,3", "2,3", "0-3", 0, 0},
    {4, 0, 1, 0, 0, 1, N, "0,4", "4,6,8,10", "4,5", "4-11", 0, 0},
    {5, 1, 1, 1, 0, 0, 7, "(5)", "5,7,9,11", "4,5", "4-11", 0, 0},
    {6, 2, 1, 0, 1, 0, 4, "(6)", "4,6,8,10", "6,7", "4-11", 0, 0},
    {7, 3, 1, 1, 1, 1, N, "3,7", "5,7,9,11", "6,7", "4-11", 0, 0},
    {8, 4, 1, 0, 2, 0, 4, "(8)", "4,6,8,10", "8,9", "4-11", 0, 0},
    {9, 5, 1, 1, 2, 0, 7, "(9)", "5,7,9,11", "8,9", "4-11", 0, 0},
    {10, 6, 1, 0, 3, 0, 4, "(10)", "4,6,8,10", "10,11", "4-11", 0, 0},
    {11, 7, 1, 1, 3, 0, 7, "(11)", "5,7,9,11", "10,11", "4-11", 0, 0},
};
static const example_table table_5_4 = {"5.4 W=12 federated=(4,8) hsdp=2", 12, 0, 0, LAYOUT_FEDERATED, 2, {4, 8}, 2, 2,
                                        "2,4", "4,8", 2, {NULL}, {"2,2:0-3", "4,2:4-11"}, ROWS(rows_5_4)};

/* 5.5: W = 6, federated = (2,4), hsdp = 2 (the no-HSDP half is in test_invalid_inputs.c). */
static const example_row rows_5_5[] = {
    {0, 0, 0, 0, 0, 1, N, "0,2", "(0)", "0,1", "0,1", 0, 0}, {1, 1, 0, 1, 0, 1, N, "1,5", "(1)", "0,1", "0,1", 0, 0},
    {2, 0, 1, 0, 0, 1, N, "0,2", "2,4", "2,3", "2-5", 0, 0}, {3, 1, 1, 1, 0, 0, 5, "(3)", "3,5", "2,3", "2-5", 0, 0},
    {4, 2, 1, 0, 1, 0, 2, "(4)", "2,4", "4,5", "2-5", 0, 0}, {5, 3, 1, 1, 1, 1, N, "1,5", "3,5", "4,5", "2-5", 0, 0},
};
static const example_table table_5_5 = {"5.5 W=6 federated=(2,4) hsdp=2", 6, 0, 0, LAYOUT_FEDERATED, 2, {2, 4}, 2, 2,
                                        "1,2", "2,4", 2, {NULL}, {"1,2:0-1", "2,2:2-5"}, ROWS(rows_5_5)};

/* 5.6: W = 16, 4 ranks per node, federated = 8 -> (8,8), hsdp = 4. */
static const example_row rows_5_6[] = {
    {0, 0, 0, 0, 0, 1, N, "0,8", "0,4", "0-3", "0-7", 0, 0},
    {1, 1, 0, 1, 0, 0, 5, "1,9", "1,5", "0-3", "0-7", 1, 0},
    {2, 2, 0, 2, 0, 1, N, "2,10", "2,6", "0-3", "0-7", 2, 0},
    {3, 3, 0, 3, 0, 0, 7, "3,11", "3,7", "0-3", "0-7", 3, 0},
    {4, 4, 0, 0, 1, 0, 0, "4,12", "0,4", "4-7", "0-7", 0, 1},
    {5, 5, 0, 1, 1, 1, N, "5,13", "1,5", "4-7", "0-7", 1, 1},
    {6, 6, 0, 2, 1, 0, 2, "6,14", "2,6", "4-7", "0-7", 2, 1},
    {7, 7, 0, 3, 1, 1, N, "7,15", "3,7", "4-7", "0-7", 3, 1},
    {8, 0, 1, 0, 0, 1, N, "0,8", "8,12", "8-11", "8-15", 0, 2},
    {9, 1, 1, 1, 0, 0, 13, "1,9", "9,13", "8-11", "8-15", 1, 2},
    {10, 2, 1, 2, 0, 1, N, "2,10", "10,14", "8-11", "8-15", 2, 2},
    {11, 3, 1, 3, 0, 0, 15, "3,11", "11,15", "8-11", "8-15", 3, 2},
    {12, 4, 1, 0, 1, 0, 8, "4,12", "8,12", "12-15", "8-15", 0, 3},
    {13, 5, 1, 1, 1, 1, N, "5,13", "9,13", "12-15", "8-15", 1, 3},
    {14, 6, 1, 2, 1, 0, 10, "6,14", "10,14", "12-15", "8-15", 2, 3},
    {15, 7, 1, 3, 1, 1, N, "7,15", "11,15", "12-15", "8-15", 3, 3},
};
static const example_table table_5_6 = {"5.6 W=16 L=4 federated=8 hsdp=4", 16, 4, 0, LAYOUT_FEDERATED, 4, {8}, 1, 4,
                                        "2,2", "8,8", 2, {NULL}, {"2,4:0-7", "2,4:8-15"}, ROWS(rows_5_6)};

/* 5.7: W = 16, federated = (4,4,8), hsdp = 2. The spec gives C, the senders' FG, receive_from and the RG of
 * federation 2; the remaining fields follow from DESIGN.md 3.1 and agree with those facts. */
static const example_row rows_5_7[] = {
    {0, 0, 0, 0, 0, 1, N, "0,4,8", "0,2", "0,1", "0-3", 0, 0},
    {1, 1, 0, 1, 0, 0, 3, "(1)", "1,3", "0,1", "0-3", 0, 0},
    {2, 2, 0, 0, 1, 0, 0, "(2)", "0,2", "2,3", "0-3", 0, 0},
    {3, 3, 0, 1, 1, 1, N, "3,7,11", "1,3", "2,3", "0-3", 0, 0},
    {4, 0, 1, 0, 0, 1, N, "0,4,8", "4,6", "4,5", "4-7", 0, 0},
    {5, 1, 1, 1, 0, 0, 7, "(5)", "5,7", "4,5", "4-7", 0, 0},
    {6, 2, 1, 0, 1, 0, 4, "(6)", "4,6", "6,7", "4-7", 0, 0},
    {7, 3, 1, 1, 1, 1, N, "3,7,11", "5,7", "6,7", "4-7", 0, 0},
    {8, 0, 2, 0, 0, 1, N, "0,4,8", "8,10,12,14", "8,9", "8-15", 0, 0},
    {9, 1, 2, 1, 0, 0, 11, "(9)", "9,11,13,15", "8,9", "8-15", 0, 0},
    {10, 2, 2, 0, 1, 0, 8, "(10)", "8,10,12,14", "10,11", "8-15", 0, 0},
    {11, 3, 2, 1, 1, 1, N, "3,7,11", "9,11,13,15", "10,11", "8-15", 0, 0},
    {12, 4, 2, 0, 2, 0, 8, "(12)", "8,10,12,14", "12,13", "8-15", 0, 0},
    {13, 5, 2, 1, 2, 0, 11, "(13)", "9,11,13,15", "12,13", "8-15", 0, 0},
    {14, 6, 2, 0, 3, 0, 8, "(14)", "8,10,12,14", "14,15", "8-15", 0, 0},
    {15, 7, 2, 1, 3, 0, 11, "(15)", "9,11,13,15", "14,15", "8-15", 0, 0},
};
static const example_table table_5_7 = {"5.7 W=16 federated=(4,4,8) hsdp=2", 16, 0, 0, LAYOUT_FEDERATED, 2, {4, 4, 8},
                                        3, 2, "2,2,4", "4,4,8", 3, {NULL},
                                        {"2,2:0-3", "2,2:4-7", "4,2:8-15"}, ROWS(rows_5_7)};

/* DESIGN.md 3.3: W = 12, F = (4, 8), S = 2, the ranks it lists; here with streams = 2. */
static const example_row rows_design[] = {
    {0, 0, 0, 0, 0, 1, N, "0,4", "0,2", "0,1", "0-3", 0, 0},
    {1, 1, 0, 1, 0, 0, 3, "1", "1,3", "0,1", "0-3", 0, 0},
    {2, 2, 0, 0, 1, 0, 0, "2", "0,2", "2,3", "0-3", 0, 0},
    {3, 3, 0, 1, 1, 1, N, "3,7", "1,3", "2,3", "0-3", 0, 0},
    {4, 0, 1, 0, 0, 1, N, "0,4", "4,6,8,10", "4,5", "4-11", 0, 0},
    {5, 1, 1, 1, 0, 0, 7, "5", "5,7,9,11", "4,5", "4-11", 0, 0},
    {7, 3, 1, 1, 1, 1, N, "3,7", "5,7,9,11", "6,7", "4-11", 0, 0},
    {8, 4, 1, 0, 2, 0, 4, "8", "4,6,8,10", "8,9", "4-11", 0, 0},
};
static const example_table table_design = {"DESIGN 3.3 W=12 F=(4,8) S=2 streams=2", 12, 0, 2, LAYOUT_FEDERATED, 2,
                                           {4, 8}, 2, 2, "2,4", "4,8", 2, {NULL}, {"2,2:0-3", "4,2:4-11"},
                                           ROWS(rows_design)};

/* The ranks part of "SHAPE:RANKS", or NULL. */
static const char *mesh_ranks(const char *mesh) { return mesh ? strchr(mesh, ':') + 1 : NULL; }

/* The K instances of a stream-replicated group: same members, distinct handles; instance K is refused. */
static void check_instances(const xffl_state_t *st, xffl_group_kind_t kind, const char *members, int k,
                            const char *ctx) {
  xffl_group_t *handles[8];
  for (int i = 0; i < k; ++i) {
    handles[i] = api_expect_group(st, kind, i, members, ctx);
    if (!members) return;
    for (int j = 0; j < i; ++j)
      if (handles[j] == handles[i]) fail_msg("%s: group kind %d instances %d and %d share a handle", ctx, kind, j, i);
  }
  xffl_group_t *out = NULL;
  assert_xffl_status(xffl_get_group(st, kind, k, &out), XFFL_EINVAL);
  assert_null(out);
  assert_xffl_status(xffl_get_group(st, kind, -1, &out), XFFL_EINVAL);
}

static void check_row(const example_table *t, const example_row *row) {
  char ctx[160];
  snprintf(ctx, sizeof ctx, "table %s, rank %d", t->name, row->r);
  const int w = t->world, r = row->r;
  xffl_state_t *st = api_global_state(w, r);

  if (t->node_size) {
    assert_int_equal(row->node_local_rank, r % t->node_size); /* the torchrun convention of the spec */
    assert_int_equal(row->node_rank, r / t->node_size);
    assert_xffl_ok(xffl_set_node(st, row->node_local_rank, t->node_size, row->node_rank, w / t->node_size));
  }
  if (t->streams) assert_xffl_ok(xffl_set_exec_device(st, -1, t->streams));
  switch (t->layout) {
    case LAYOUT_FSDP: assert_xffl_ok(xffl_set_fsdp(st)); break;
    case LAYOUT_HSDP: assert_xffl_ok(xffl_set_hsdp(st, t->hsdp)); break;
    case LAYOUT_FEDERATED: assert_xffl_ok(xffl_federated_scaling(st, t->sizes, t->n_sizes, t->hsdp)); break;
  }
  const int federated = t->layout == LAYOUT_FEDERATED;
  const int with_hsdp = t->layout == LAYOUT_HSDP || (federated && t->hsdp > 0);

  /* GLOBAL */
  api_expect_int(st, XFFL_ATTR_RANK, r, ctx);
  api_expect_int(st, XFFL_ATTR_WORLD_SIZE, w, ctx);
  api_expect_int(st, XFFL_ATTR_BACKEND, XFFL_BACKEND_NONE, ctx);
  api_expect_int(st, XFFL_ATTR_DEVICE_TYPE, XFFL_DEVICE_CPU, ctx);
  api_expect_int(st, XFFL_ATTR_MASTER_PORT, API_MASTER_PORT, ctx);
  char rank_text[16];
  snprintf(rank_text, sizeof rank_text, "%d", r);
  api_expect_ints(st, XFFL_ATTR_RANK, rank_text, ctx); /* a scalar reads as a one-element tuple */
  char addr[64];
  size_t addr_len = 0;
  assert_xffl_ok(xffl_get_master_addr(st, addr, sizeof addr, &addr_len));
  assert_string_equal(addr, API_MASTER_ADDR);
  assert_int_equal(addr_len, strlen(API_MASTER_ADDR));

  /* NODE */
  if (t->node_size) {
    assert_int_equal(xffl_is_node_setup(st), 1);
    api_expect_int(st, XFFL_ATTR_NODE_LOCAL_RANK, row->node_local_rank, ctx);
    api_expect_int(st, XFFL_ATTR_NODE_LOCAL_SIZE, t->node_size, ctx);
    api_expect_int(st, XFFL_ATTR_NODE_RANK, row->node_rank, ctx);
    api_expect_int(st, XFFL_ATTR_NODE_WORLD_SIZE, w / t->node_size, ctx);
  } else {
    assert_int_equal(xffl_is_node_setup(st), 0);
    api_expect_int(st, XFFL_ATTR_NODE_LOCAL_RANK, N, ctx);
    api_expect_int(st, XFFL_ATTR_NODE_LOCAL_SIZE, N, ctx);
    api_expect_int(st, XFFL_ATTR_NODE_RANK, N, ctx);
    api_expect_int(st, XFFL_ATTR_NODE_WORLD_SIZE, N, ctx);
  }

  /* REPLICA */
  api_expect_int(st, XFFL_ATTR_REPLICA_LOCAL_RANK, row->rl, ctx);
  api_expect_int(st, XFFL_ATTR_REPLICA_LOCAL_SIZE, t->replica_local_size, ctx);
  api_expect_int(st, XFFL_ATTR_REPLICA_RANK, row->rr, ctx);
  api_expect_ints(st, XFFL_ATTR_REPLICA_WORLD_SIZE, t->replica_world_size, ctx);
  api_expect_int(st, XFFL_ATTR_HSDP, with_hsdp ? t->hsdp : N, ctx);

  /* FEDERATION */
  api_expect_int(st, XFFL_ATTR_FEDERATED_LOCAL_RANK, row->fl, ctx);
  api_expect_ints(st, XFFL_ATTR_FEDERATED_LOCAL_SIZE, t->federated_local_size, ctx);
  api_expect_int(st, XFFL_ATTR_FEDERATED_RANK, row->f, ctx);
  api_expect_int(st, XFFL_ATTR_FEDERATED_WORLD_SIZE, t->federated_world_size, ctx);

  /* Roles */
  api_expect_int(st, XFFL_ATTR_IS_SENDER, row->is_sender, ctx);
  api_expect_int(st, XFFL_ATTR_RECEIVE_FROM, row->receive_from, ctx);

  /* Streams and device */
  if (t->streams) {
    api_expect_int(st, XFFL_ATTR_STREAMS, t->streams, ctx);
    api_expect_int(st, XFFL_ATTR_CURRENT_DEVICE, 0, ctx); /* -1 on CPU: the only device, 0 */
  }

  /* Meshes */
  const int mesh_index = federated ? row->f : 0;
  const char *fsdp_mesh = t->fsdp_mesh[mesh_index], *hsdp_mesh = t->hsdp_mesh[mesh_index];
  api_expect_mesh(st, XFFL_MESH_FSDP, fsdp_mesh, ctx);
  api_expect_mesh(st, XFFL_MESH_HSDP, hsdp_mesh, ctx);
  assert_int_equal(xffl_is_fsdp_setup(st), fsdp_mesh != NULL);
  assert_int_equal(xffl_is_hsdp_setup(st), hsdp_mesh != NULL);
  assert_int_equal(xffl_is_federated_scaling_setup(st), federated);

  /* Groups: every kind, in the order of DESIGN.md 3.2 */
  char world[32];
  snprintf(world, sizeof world, "0-%d", w - 1);
  api_expect_group(st, XFFL_GROUP_WORLD, 0, world, ctx);
  api_expect_group(st, XFFL_GROUP_FSDP, 0, mesh_ranks(fsdp_mesh), ctx);
  api_expect_group(st, XFFL_GROUP_HSDP_REPLICA, 0, row->rg, ctx);
  api_expect_group(st, XFFL_GROUP_HSDP_SHARD, 0, row->shard, ctx);
  api_expect_group(st, XFFL_GROUP_FEDERATION, 0, row->fed, ctx);
  const int k = t->streams ? t->streams : 1;
  check_instances(st, XFFL_GROUP_FEDERATED, row->fg, k, ctx);
  check_instances(st, XFFL_GROUP_REPLICA, federated && with_hsdp ? row->rg : NULL, k, ctx);
  /* The other kinds have one instance whatever K is. */
  xffl_group_t *out = NULL;
  assert_xffl_status(xffl_get_group(st, XFFL_GROUP_WORLD, 1, &out), XFFL_EINVAL);
  if (row->fed) assert_xffl_status(xffl_get_group(st, XFFL_GROUP_FEDERATION, 1, &out), XFFL_EINVAL);
  assert_null(out);

  xffl_state_destroy(st);
}

static void test_table(void **state) {
  const example_table *t = *state;
  for (size_t i = 0; i < t->n_rows; ++i) check_row(t, &t->rows[i]);
}

/* A row table must cover every rank of its world unless it is DESIGN.md's excerpt. */
static void test_tables_cover_their_worlds(void **state) {
  (void)state;
  const example_table *full[] = {&table_5_1, &table_fsdp, &table_5_2, &table_5_3, &table_5_4,
                                 &table_5_5, &table_5_6,  &table_5_7};
  for (size_t t = 0; t < sizeof full / sizeof full[0]; ++t) {
    assert_int_equal(full[t]->n_rows, (size_t)full[t]->world);
    for (size_t i = 0; i < full[t]->n_rows; ++i) assert_int_equal(full[t]->rows[i].r, (int)i);
  }
}

/* One cmocka test per table, named after it. */
#define TABLE_TEST(table) {(table).name, test_table, NULL, NULL, (void *)&(table)}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tables_cover_their_worlds),
      TABLE_TEST(table_5_1),  TABLE_TEST(table_fsdp), TABLE_TEST(table_5_2), TABLE_TEST(table_5_2_streams),
      TABLE_TEST(table_5_3),  TABLE_TEST(table_5_4),  TABLE_TEST(table_5_5), TABLE_TEST(table_5_6),
      TABLE_TEST(table_5_7),  TABLE_TEST(table_design),
  };
  return cmocka_run_group_tests_name("api.examples", tests, NULL, NULL);
}
