/*
 * A healthy job for the logging checks: rendezvous, a group of its own, a barrier and an allreduce on
 * WORLD, destroy. What the library prints at each XFFL_LOG_LEVEL is checked by the CMake tests on
 * xffl-run's output; this program only makes sure the job did its work.
 */
#include "fault_check.h"

int main(void) {
  const int rank = fault_rank(), world = fault_world();
  xffl_state_t *st = NULL;
  xffl_status_t rc = xffl_state_from_env(&st);
  fault_check(rc == XFFL_OK, "xffl_state_from_env: %s: %s", xffl_status_string(rc), xffl_last_error_message());
  if (rc != XFFL_OK) return fault_finish("log_lines");

  xffl_group_t *world_group = NULL, *pair = NULL;
  int64_t one = 1, total = 0;
  rc = xffl_get_group(st, XFFL_GROUP_WORLD, 0, &world_group);
  if (rc == XFFL_OK) rc = xffl_barrier(world_group);
  if (rc == XFFL_OK) rc = xffl_allreduce(world_group, &one, &total, 1, XFFL_I64, XFFL_SUM, NULL);
  fault_check(rc == XFFL_OK && total == world, "allreduce on WORLD: %s (total %lld): %s", xffl_status_string(rc),
              (long long)total, xffl_last_error_message());
  if (world % 2 == 0) { /* ranks 2k and 2k+1 make a group of their own: group creation is logged too */
    const int first = rank - rank % 2;
    const int own_pair[2] = {first, first + 1};
    rc = xffl_create_process_group(st, own_pair, 2, "pair", &pair);
    fault_check(rc == XFFL_OK, "xffl_create_process_group: %s: %s", xffl_status_string(rc), xffl_last_error_message());
    xffl_group_destroy(pair);
  }
  xffl_state_destroy(st);
  return fault_finish("log_lines");
}
