/*
 * One rank with another XFFL_JOB_ID than the rest (it sets its own before xffl_state_from_env):
 * the store refuses it with a clear error naming both ids (XFFL_EINVAL, store.h), and the others
 * time out naming it. The store's side also says why on its stderr (checked by the CMake test).
 *
 * usage: job_mismatch
 */
#include "fault_check.h"

int main(void) {
  const int rank = fault_rank(), world = fault_world();
  const int stranger = world - 1;
  const char *launcher_job = getenv("XFFL_JOB_ID");
  if (!launcher_job) {
    fprintf(stderr, "job_mismatch: xffl-run sets XFFL_JOB_ID; it is missing\n");
    return 2;
  }
  char job[300];
  snprintf(job, sizeof job, "%s", launcher_job);
  if (rank == stranger) setenv("XFFL_JOB_ID", "another-job", 1);

  xffl_state_t *st = NULL;
  const double started = fault_now_ms();
  const xffl_status_t rc = xffl_state_from_env(&st);
  const fault_seen_t seen = fault_record("xffl_state_from_env", rc, started);
  if (rank == stranger) {
    fault_check(rc == XFFL_EINVAL, "expected XFFL_EINVAL for a foreign job id, got %s", xffl_status_string(rc));
    fault_check(fault_contains(seen.message, "another-job"), "the message does not name this rank's job id");
    fault_check(fault_contains(seen.message, job), "the message does not name the store's job id '%s'", job);
    fault_check(fault_names_rank(seen.message, rank), "the message does not name this rank");
  } else {
    fault_expect_peer_loss(&seen, "xffl_state_from_env", stranger);
  }
  fault_check(rc == XFFL_OK || st == NULL, "xffl_state_from_env failed but wrote a state");
  xffl_state_destroy(st);
  return fault_finish("job_mismatch");
}
