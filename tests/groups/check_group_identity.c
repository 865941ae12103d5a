/*
 * Run under xffl-run with 3 ranks and the UCX backend: process groups can never take each other's
 * messages, however many are made and destroyed, and members may list them in any order.
 *
 *   churn:   ranks 0 and 1 make {0,1} 1,027 times, destroying each but the last; ranks 0 and 2 make
 *            {0,2} 160 times. A 19-bit hash of (members, creation count) gave both final groups one tag,
 *            and rank 0's allreduce over {0,1} returned rank 2's value. Rank 2 sends first here, while
 *            rank 0 waits in {0,1}, so any shared tag would be matched by the wrong group.
 *   live:    20,000 live groups (or argv[1]) that all contain rank 0 ({0,1} and {0,2} alternately, made
 *            in a different interleaving on every rank), one allreduce on each, every sum exact.
 *   order:   every rank lists {0,1,2} in another order: one group, rank order sorted.
 * Prints "rank R: N checks passed" and exits 0, or names the first failure and exits 1.
 */
#include <stdio.h>
#include <stdlib.h>

#include <xffl.h>

#include "rank_checks.h"

/* A condition that must hold; counted. */
#define EXPECT(condition, ...)             \
  do {                                     \
    if (!(condition)) FAIL(__VA_ARGS__);   \
    ++checks;                              \
  } while (0)

static long checks = 0;

static xffl_group_t *make(xffl_state_t *st, int a, int b) {
  /* Members list the pair in opposite orders: the group's order is the sorted one anyway. */
  const int ranks[2] = {my_rank == a ? a : b, my_rank == a ? b : a};
  xffl_group_t *group = NULL;
  CHECK(xffl_create_process_group(st, ranks, 2, "pair", &group));
  return group;
}

static int sum_over(xffl_group_t *group, int value) {
  int out = -1;
  CHECK(xffl_allreduce(group, &value, &out, 1, XFFL_I32, XFFL_SUM, NULL));
  return out;
}

static void churn(xffl_state_t *st) {
  xffl_group_t *g01 = NULL, *g02 = NULL;
  if (my_rank == 0 || my_rank == 1)
    for (int n = 0; n < 1027; ++n) {
      xffl_group_destroy(g01);
      g01 = make(st, 0, 1);
    }
  if (my_rank == 0 || my_rank == 2)
    for (int n = 0; n < 160; ++n) {
      xffl_group_destroy(g02);
      g02 = make(st, 0, 2);
    }
  /* Rank r contributes r: {0,1} sums to 1 and {0,2} to 2 on every member. */
  if (my_rank == 2) EXPECT(sum_over(g02, 2) == 2, "churn: {0,2} did not sum to 2");
  if (my_rank == 1) EXPECT(sum_over(g01, 1) == 1, "churn: {0,1} did not sum to 1");
  if (my_rank == 0) {
    const int s01 = sum_over(g01, 0);
    EXPECT(s01 == 1, "churn: {0,1} summed to %d, not 1 (another group's message?)", s01);
    const int s02 = sum_over(g02, 0);
    EXPECT(s02 == 2, "churn: {0,2} summed to %d, not 2", s02);
  }
  xffl_group_destroy(g01);
  xffl_group_destroy(g02);
}

static int live_count = 20000;

static void live(xffl_state_t *st) {
  /* Rank 0 makes {0,1} and {0,2} alternately; ranks 1 and 2 make only theirs. */
  xffl_group_t **groups = calloc(live_count, sizeof *groups);
  EXPECT(groups != NULL, "out of memory");
  for (int i = 0; i < live_count; ++i) {
    const int peer = 1 + i % 2;
    if (my_rank == 0 || my_rank == peer) groups[i] = make(st, 0, peer);
  }
  /* Group i sums (i + 1) from rank 0 and (i + 1) * peer from its peer. Ranks 1 and 2 each run ahead
   * into their next group while rank 0 is still in the other peer's, so messages of other groups wait
   * unexpected at rank 0 all the time. */
  if (my_rank == 0) {
    for (int i = 0; i < live_count; ++i) {
      const int peer = 1 + i % 2, got = sum_over(groups[i], i + 1);
      EXPECT(got == (i + 1) * (1 + peer), "live: group %d ({0,%d}) summed to %d, not %d", i, peer, got,
             (i + 1) * (1 + peer));
    }
  } else {
    for (int i = 0; i < live_count; ++i)
      if (groups[i]) {
        const int got = sum_over(groups[i], (i + 1) * my_rank);
        EXPECT(got == (i + 1) * (1 + my_rank), "live: group %d summed to %d on rank %d", i, got, my_rank);
      }
  }
  for (int i = 0; i < live_count; ++i) xffl_group_destroy(groups[i]);
  free(groups);
}

static void order(xffl_state_t *st) {
  static const int lists[3][3] = {{2, 0, 1}, {0, 1, 2}, {1, 2, 0}};
  xffl_group_t *group = NULL;
  CHECK(xffl_create_process_group(st, lists[my_rank], 3, "any order", &group));
  int index = -1, ranks[3] = {-1, -1, -1};
  size_t n = 0;
  CHECK(xffl_group_rank(group, &index));
  CHECK(xffl_group_ranks(group, ranks, 3, &n));
  EXPECT(index == my_rank, "order: group rank %d, not the sorted position %d", index, my_rank);
  EXPECT(n == 3 && ranks[0] == 0 && ranks[1] == 1 && ranks[2] == 2, "order: members are not 0, 1, 2");
  const int got = sum_over(group, 1 << my_rank);
  EXPECT(got == 7, "order: sum %d, not 7", got);
  xffl_group_destroy(group);
}

int main(int argc, char **argv) {
  if (argc > 1) live_count = atoi(argv[1]);
  EXPECT(live_count >= 2, "live groups: %d, at least 2", live_count);
  xffl_state_t *st = NULL;
  CHECK(xffl_state_from_env(&st));
  CHECK(xffl_get_int(st, XFFL_ATTR_RANK, &my_rank));
  int world = 0;
  CHECK(xffl_get_int(st, XFFL_ATTR_WORLD_SIZE, &world));
  EXPECT(world == 3, "run me on 3 ranks, not %d", world);
  churn(st);
  live(st);
  order(st);
  xffl_group_t *everyone = NULL;
  CHECK(xffl_get_group(st, XFFL_GROUP_WORLD, 0, &everyone));
  CHECK(xffl_barrier(everyone));
  printf("rank %d: %ld checks passed\n", my_rank, checks);
  xffl_state_destroy(st);
  return 0;
}
