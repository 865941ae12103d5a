/*
 * A rank that disappears after set_global, before the first collective on a group it belongs to.
 * The other members first make sure its process is gone; then their collective must return
 * XFFL_ETIMEOUT or XFFL_EPEER naming that rank and the group, a second collective on the same group
 * must fail at once with the same error (the group is broken for good), and destroying the state
 * must still return (xffl-run --max-time and the CTest timeout bound the whole run).
 *
 * usage: group_loss [VICTIM]   (default: the last rank; the group is WORLD)
 */
#include "fault_check.h"

int main(int argc, char **argv) {
  const int rank = fault_rank(), world = fault_world();
  const int victim = argc > 1 ? atoi(argv[1]) : world - 1;

  xffl_state_t *st = NULL;
  const double rendezvous_started = fault_now_ms();
  xffl_status_t rc = xffl_state_from_env(&st);
  if (rc != XFFL_OK) {
    fault_record("xffl_state_from_env", rc, rendezvous_started);
    fault_check(0, "the rendezvous itself failed; this scenario starts after it");
    return fault_finish("group_loss");
  }
  if (rank == victim) fault_vanish("after set_global, before any collective");

  xffl_group_t *world_group = NULL;
  rc = xffl_get_group(st, XFFL_GROUP_WORLD, 0, &world_group);
  fault_check(rc == XFFL_OK, "xffl_get_group(WORLD) returned %s", xffl_status_string(rc));
  if (rc == XFFL_OK) {
    const char *group_name = xffl_group_description(world_group);
    /* The scenario is "gone before the first collective": make sure it is, instead of racing it. */
    fault_check(fault_wait_until_rank_gone(victim, fault_timeout_ms()), "rank %d is still running", victim);
    float value = (float)rank, sum = 0;
    double started = fault_now_ms();
    rc = xffl_allreduce(world_group, &value, &sum, 1, XFFL_F32, XFFL_SUM, NULL);
    const fault_seen_t first = fault_record("first allreduce", rc, started);
    fault_expect_peer_loss(&first, "first allreduce", victim);
    fault_check(fault_contains(first.message, group_name), "first allreduce: the message does not name the group '%s'",
                group_name);

    started = fault_now_ms();
    rc = xffl_allreduce(world_group, &value, &sum, 1, XFFL_F32, XFFL_SUM, NULL);
    const fault_seen_t second = fault_record("second allreduce", rc, started);
    fault_check(second.status == first.status, "second allreduce returned %s, the first %s",
                xffl_status_string(second.status), xffl_status_string(first.status));
    fault_check(strcmp(second.message, first.message) == 0, "second allreduce: the message differs from the first's");
    /* A broken group answers from what it knows instead of waiting out a second timeout: the bound is
     * half the configured timeout, which a cached error meets by orders of magnitude. */
    fault_check(second.elapsed_ms < fault_timeout_ms() / 2, "second allreduce took %.0f ms: it waited again",
                second.elapsed_ms);
  }
  fault_check(fault_meet("survivors", world - 1, 2 * fault_timeout_ms()), "not every surviving rank got this far");
  const double destroy_started = fault_now_ms();
  xffl_state_destroy(st);
  printf("rank %d: xffl_state_destroy returned after %.0f ms\n", rank, fault_now_ms() - destroy_started);
  return fault_finish("group_loss");
}
