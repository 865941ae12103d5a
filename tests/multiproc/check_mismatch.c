/*
 * Run under xffl-run (4 ranks): one rank calls a collective with another count, dtype, op or root
 * than the others. Every rank must get XFFL_EINVAL with a message that names the argument and both
 * values; a rank whose part completed before the mismatch was found (the root of a broadcast) gets it
 * from its next call on the group. The group then keeps returning that error; with small messages
 * the state still works (a new group of every rank allreduces correctly).
 *
 *   check_mismatch <collective> <argument> <odd rank> [large]
 *   collective: allreduce | broadcast | allgather | reduce_scatter
 *   argument:   count | dtype | op | root
 *
 * Prints "rank R: mismatch checks passed" and exits 0, or names the failure and exits 1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xffl.h>

#include "rank_checks.h"


/* 100 elements: eager messages and the small-message schedules; "large": 2^20 (4 MiB, chunked, the
   ring and chain schedules, UCX's rendezvous protocol). */
static size_t kCount = 100;
static int *buffer_a, *buffer_b;

/* The call under test with this rank's arguments. */
static xffl_status_t call(xffl_group_t *group, const char *collective, size_t count, xffl_dtype_t dtype,
                          xffl_redop_t op, int root) {
  if (!strcmp(collective, "allreduce")) return xffl_allreduce(group, buffer_a, buffer_b, count, dtype, op, NULL);
  if (!strcmp(collective, "broadcast")) return xffl_broadcast(group, buffer_a, count, dtype, root, NULL);
  if (!strcmp(collective, "allgather")) return xffl_allgather(group, buffer_a, buffer_b, count, dtype, NULL);
  if (!strcmp(collective, "reduce_scatter"))
    return xffl_reduce_scatter(group, buffer_a, buffer_b, count, dtype, op, NULL);
  FAIL("unknown collective %s", collective);
}

static void expect_words(const char *message, const char *first, const char *second) {
  if (!strstr(message, first) || !strstr(message, second))
    FAIL("the message does not name \"%s\" and \"%s\": %s", first, second, message);
}

int main(int argc, char **argv) {
  if (argc != 4 && !(argc == 5 && !strcmp(argv[4], "large"))) {
    fprintf(stderr, "usage: %s <collective> <argument> <odd rank> [large]\n", argv[0]);
    return 2;
  }
  if (argc == 5) kCount = (size_t)1 << 20;
  buffer_a = calloc(kCount * 8, sizeof *buffer_a);
  buffer_b = calloc(kCount * 8, sizeof *buffer_b);
  if (!buffer_a || !buffer_b) FAIL("out of memory");
  char fewer[64], more[64];
  snprintf(fewer, sizeof fewer, "count %zu", kCount - 1);
  snprintf(more, sizeof more, "count %zu", kCount);
  const char *collective = argv[1], *argument = argv[2];
  const int odd = atoi(argv[3]);
  xffl_state_t *st = NULL;
  CHECK(xffl_state_from_env(&st));
  CHECK(xffl_get_int(st, XFFL_ATTR_RANK, &my_rank));
  xffl_group_t *world = NULL;
  CHECK(xffl_get_group(st, XFFL_GROUP_WORLD, 0, &world));

  /* Everyone: count 100 of i32, op sum, root 0. The odd rank changes one of them. */
  size_t count = kCount;
  xffl_dtype_t dtype = XFFL_I32;
  xffl_redop_t op = XFFL_SUM;
  int root = 0;
  const char *mine = NULL, *theirs = NULL; /* the words the message must hold */
  if (!strcmp(argument, "count")) {
    if (my_rank == odd) count = kCount - 1;
    mine = fewer, theirs = more;
  } else if (!strcmp(argument, "dtype")) {
    if (my_rank == odd) dtype = XFFL_F32; /* the same size: only the signature tells them apart */
    mine = "dtype f32", theirs = "dtype i32";
  } else if (!strcmp(argument, "op")) {
    if (my_rank == odd) op = XFFL_MAX;
    mine = "op max", theirs = "op sum";
  } else if (!strcmp(argument, "root")) {
    if (my_rank == odd) root = 1;
    mine = "root 1", theirs = "root 0";
  } else {
    FAIL("unknown argument %s", argument);
  }

  xffl_status_t rc = call(world, collective, count, dtype, op, root);
  const char *where = "the call";
  if (rc == XFFL_OK) { /* this rank's part completed first: its next call on the group reports it */
    if (strcmp(collective, "broadcast") != 0) FAIL("%s with a mismatched %s returned XFFL_OK", collective, argument);
    rc = xffl_barrier(world);
    where = "the call after the broadcast";
  }
  if (rc != XFFL_EINVAL)
    FAIL("%s returned %s instead of XFFL_EINVAL: %s", where, xffl_status_string(rc), xffl_last_error_message());
  char message[1024];
  snprintf(message, sizeof message, "%s", xffl_last_error_message());
  expect_words(message, mine, theirs);
  printf("rank %d: %s: %s\n", my_rank, where, message);

  /* The group stays unusable, with the same error at once. */
  rc = xffl_barrier(world);
  if (rc != XFFL_EINVAL) FAIL("the group after the mismatch returned %s: %s", xffl_status_string(rc), xffl_last_error_message());

  /* The state still works: a new group of every rank. Not after large messages: a send UCX could not
     finish (its receiver cancelled) closed the endpoint to that member (collective.h). */
  if (argc == 5) {
    xffl_state_destroy(st);
    free(buffer_a);
    free(buffer_b);
    printf("rank %d: mismatch checks passed\n", my_rank);
    return 0;
  }
  int world_size = 0;
  CHECK(xffl_get_int(st, XFFL_ATTR_WORLD_SIZE, &world_size));
  int ranks[64];
  for (int r = 0; r < world_size; ++r) ranks[r] = r;
  xffl_group_t *fresh = NULL;
  CHECK(xffl_create_process_group(st, ranks, (size_t)world_size, "fresh group", &fresh));
  int value = my_rank + 1, sum = 0;
  CHECK(xffl_allreduce(fresh, &value, &sum, 1, XFFL_I32, XFFL_SUM, NULL));
  if (sum != world_size * (world_size + 1) / 2) FAIL("the fresh group's allreduce gave %d", sum);
  xffl_group_destroy(fresh);
  xffl_state_destroy(st);
  free(buffer_a);
  free(buffer_b);
  printf("rank %d: mismatch checks passed\n", my_rank);
  return 0;
}
