/* A user's program, built outside the xffl tree against an installed xffl: plans one rank of the
 * worked example of DESIGN.md section 3.3 (W = 12, F = (4, 8), S = 2) and checks it against the table.
 * Usage: plan_rank RANK (one of the table's rows: 0 1 2 3 4 5 7 8). Exit 0 only if every value agrees. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xffl.h>

struct row {
  int rank, federated_local_rank, federated_rank, replica_local_rank, replica_rank, is_sender, receive_from;
  int federated[2], n_federated;
  int replica[4], n_replica;
  int shard[2];
  int federation_first, federation_last;
};

/* DESIGN.md section 3.3, one line per row of the table (receive_from -1 for "-"). */
static const struct row table[] = {
    {0, 0, 0, 0, 0, 1, -1, {0, 4}, 2, {0, 2}, 2, {0, 1}, 0, 3},
    {1, 1, 0, 1, 0, 0, 3, {1}, 1, {1, 3}, 2, {0, 1}, 0, 3},
    {2, 2, 0, 0, 1, 0, 0, {2}, 1, {0, 2}, 2, {2, 3}, 0, 3},
    {3, 3, 0, 1, 1, 1, -1, {3, 7}, 2, {1, 3}, 2, {2, 3}, 0, 3},
    {4, 0, 1, 0, 0, 1, -1, {0, 4}, 2, {4, 6, 8, 10}, 4, {4, 5}, 4, 11},
    {5, 1, 1, 1, 0, 0, 7, {5}, 1, {5, 7, 9, 11}, 4, {4, 5}, 4, 11},
    {7, 3, 1, 1, 1, 1, -1, {3, 7}, 2, {5, 7, 9, 11}, 4, {6, 7}, 4, 11},
    {8, 4, 1, 0, 2, 0, 4, {8}, 1, {4, 6, 8, 10}, 4, {8, 9}, 4, 11},
};

static int failures = 0;

static void check(const char *what, xffl_status_t status) {
  if (status != XFFL_OK) {
    fprintf(stderr, "%s: %s (%s)\n", what, xffl_status_string(status), xffl_last_error_message());
    exit(1);
  }
}

static void expect_int(const xffl_state_t *st, xffl_attr_t attr, const char *name, int expected) {
  int value = -100;
  xffl_status_t status = xffl_get_int(st, attr, &value);
  if (expected < 0) { /* "-" in the table: Python holds None, the C API says ENOTSET */
    if (status != XFFL_ENOTSET) {
      fprintf(stderr, "%s: expected XFFL_ENOTSET, got %s (value %d)\n", name, xffl_status_string(status), value);
      ++failures;
    }
    return;
  }
  check(name, status);
  if (value != expected) {
    fprintf(stderr, "%s: expected %d, got %d\n", name, expected, value);
    ++failures;
  }
}

static void expect_group(const xffl_state_t *st, xffl_group_kind_t kind, const char *name, const int *members,
                         size_t n) {
  xffl_group_t *group = NULL;
  int got[16];
  size_t len = 0, i;
  check(name, xffl_get_group(st, kind, 0, &group));
  check(name, xffl_group_ranks(group, got, sizeof got / sizeof got[0], &len));
  if (len != n) {
    fprintf(stderr, "%s: expected %u members, got %u\n", name, (unsigned)n, (unsigned)len);
    ++failures;
    return;
  }
  for (i = 0; i < n; ++i)
    if (got[i] != members[i]) {
      fprintf(stderr, "%s: member %u is %d, expected %d\n", name, (unsigned)i, got[i], members[i]);
      ++failures;
    }
}

int main(int argc, char **argv) {
  const int sizes[2] = {4, 8};
  const struct row *row = NULL;
  int federation[8], replica_world_size[2] = {0, 0};
  size_t i, len = 0;
  xffl_state_t *st = NULL;
  int rank = argc > 1 ? atoi(argv[1]) : 5;

  for (i = 0; i < sizeof table / sizeof table[0]; ++i)
    if (table[i].rank == rank) row = &table[i];
  if (!row) {
    fprintf(stderr, "rank %d is not a row of the table\n", rank);
    return 2;
  }

  check("xffl_state_create", xffl_state_create(&st));
  check("xffl_set_global", xffl_set_global(st, XFFL_BACKEND_NONE, XFFL_DEVICE_CPU, "127.0.0.1", 29500, rank, 12));
  check("xffl_federated_scaling", xffl_federated_scaling(st, sizes, 2, 2));

  expect_int(st, XFFL_ATTR_FEDERATED_LOCAL_RANK, "federated_local_rank", row->federated_local_rank);
  expect_int(st, XFFL_ATTR_FEDERATED_RANK, "federated_rank", row->federated_rank);
  expect_int(st, XFFL_ATTR_REPLICA_LOCAL_RANK, "replica_local_rank", row->replica_local_rank);
  expect_int(st, XFFL_ATTR_REPLICA_RANK, "replica_rank", row->replica_rank);
  expect_int(st, XFFL_ATTR_IS_SENDER, "is_sender", row->is_sender);
  expect_int(st, XFFL_ATTR_RECEIVE_FROM, "receive_from", row->receive_from);
  check("replica_world_size", xffl_get_ints(st, XFFL_ATTR_REPLICA_WORLD_SIZE, replica_world_size, 2, &len));
  if (len != 2 || replica_world_size[0] != 2 || replica_world_size[1] != 4) {
    fprintf(stderr, "replica_world_size: expected (2, 4)\n");
    ++failures;
  }
  expect_group(st, XFFL_GROUP_FEDERATED, "FEDERATED", row->federated, (size_t)row->n_federated);
  expect_group(st, XFFL_GROUP_REPLICA, "REPLICA", row->replica, (size_t)row->n_replica);
  expect_group(st, XFFL_GROUP_HSDP_SHARD, "HSDP_SHARD", row->shard, 2);
  for (i = 0; i <= (size_t)(row->federation_last - row->federation_first); ++i)
    federation[i] = row->federation_first + (int)i;
  expect_group(st, XFFL_GROUP_FEDERATION, "FEDERATION", federation,
               (size_t)(row->federation_last - row->federation_first + 1));
  xffl_state_destroy(st);

  if (failures) {
    fprintf(stderr, "rank %d: %d values differ from DESIGN.md 3.3\n", rank, failures);
    return 1;
  }
  printf("rank %d of W=12 F=(4,8) S=2 matches DESIGN.md 3.3 (xffl %s)\n", rank, xffl_version_string());
  return 0;
}
