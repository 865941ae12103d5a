/*
 * A rank that disappears during rendezvous: it exits (status 0, so xffl-run does not end the job)
 * before it ever reaches the store. Every other rank's xffl_state_from_env must give up within
 * XFFL_TIMEOUT with XFFL_ETIMEOUT or XFFL_EPEER, naming the missing rank, and hand back no state.
 *
 * usage: rendezvous_loss [VICTIM]   (default: the last rank)
 */
#include "fault_check.h"

int main(int argc, char **argv) {
  const int rank = fault_rank(), world = fault_world();
  const int victim = argc > 1 ? atoi(argv[1]) : world - 1;
  if (rank == victim) fault_vanish("before the rendezvous");

  xffl_state_t *st = NULL;
  const double started = fault_now_ms();
  const xffl_status_t rc = xffl_state_from_env(&st);
  const fault_seen_t seen = fault_record("xffl_state_from_env", rc, started);
  fault_expect_peer_loss(&seen, "xffl_state_from_env", victim);
  fault_check(st == NULL, "xffl_state_from_env failed but wrote a state");
  xffl_state_destroy(st);
  return fault_finish("rendezvous_loss");
}
