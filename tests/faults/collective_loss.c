/*
 * A rank that dies in the middle of a large allreduce (64 MiB of f32 on WORLD). All ranks meet at a
 * barrier first; the victim then starts the allreduce, and a watcher thread ends the process
 * (_exit(0), so xffl-run's fail-fast stays out of it) as soon as the first reduced bytes land in
 * its output: the collective is under way on every rank. The survivors' allreduce must return
 * XFFL_ETIMEOUT or XFFL_EPEER naming the victim, and destroy must still return.
 *
 * Should the victim's allreduce finish before its watcher runs (a scheduling accident), it leaves
 * right after; the survivors then run a second allreduce, which must fail the same way. Each
 * survivor says which of the two failed.
 *
 * With HOW = sigkill the victim dies by raise(SIGKILL) instead. xffl-run then ends the job with
 * SIGTERM (exit 137 names the victim's signal), so the survivors ignore SIGTERM until they have
 * recorded their result; give xffl-run a --grace longer than XFFL_TIMEOUT.
 *
 * usage: collective_loss [VICTIM] [MIB] [exit|sigkill]   (default: the last rank, 64 MiB, exit)
 * FAULT_COLLECTIVE_TIMEOUT_MS, when set, replaces XFFL_TIMEOUT after the rendezvous (xffl_set_option).
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>

#include "fault_check.h"

static const float kUntouched = -1.0f; /* every contribution is positive, so no result equals it */

typedef struct {
  const volatile float *output;
  size_t count;
  int by_signal;
} watch_t;

/* Polls a sample of the output (one float per 4 KiB page) until any of it changes, then leaves. */
static void *watch_output(void *arg) {
  const watch_t *watch = arg;
  const size_t stride = 1024;
  for (;;) {
    for (size_t i = 0; i < watch->count; i += stride)
      if (watch->output[i] != kUntouched) {
        if (watch->by_signal) {
          printf("rank %d: leaving by raise(SIGKILL) in the middle of the allreduce\n", fault_rank());
          fflush(stdout);
          raise(SIGKILL);
        }
        fault_vanish("in the middle of the allreduce (its output started to change)");
      }
    sched_yield();
  }
  return NULL;
}

int main(int argc, char **argv) {
  const int rank = fault_rank(), world = fault_world();
  const int victim = argc > 1 ? atoi(argv[1]) : world - 1;
  const size_t mib = argc > 2 ? (size_t)atoi(argv[2]) : 64;
  const size_t count = mib * 1024 * 1024 / sizeof(float);
  const int by_signal = argc > 3 && strcmp(argv[3], "sigkill") == 0;
  if (by_signal && rank != victim) signal(SIGTERM, SIG_IGN); /* xffl-run's fail-fast would end us too soon */

  float *input = malloc(count * sizeof(float)), *output = malloc(count * sizeof(float));
  if (!input || !output) {
    fprintf(stderr, "rank %d: cannot allocate 2 x %zu MiB\n", rank, mib);
    return 2;
  }
  for (size_t i = 0; i < count; ++i) {
    input[i] = (float)(rank + 1);
    output[i] = kUntouched;
  }

  xffl_state_t *st = NULL;
  const double rendezvous_started = fault_now_ms();
  xffl_status_t rc = xffl_state_from_env(&st);
  if (rc != XFFL_OK) {
    fault_record("xffl_state_from_env", rc, rendezvous_started);
    fault_check(0, "the rendezvous itself failed; this scenario starts after it");
    return fault_finish("collective_loss");
  }
  /* Under valgrind the rendezvous needs a long XFFL_TIMEOUT; the collective can keep a short one. */
  if (getenv("FAULT_COLLECTIVE_TIMEOUT_MS")) {
    rc = xffl_set_option(st, XFFL_OPT_TIMEOUT_MS, atoi(getenv("FAULT_COLLECTIVE_TIMEOUT_MS")));
    fault_check(rc == XFFL_OK, "xffl_set_option(XFFL_OPT_TIMEOUT_MS) returned %s", xffl_status_string(rc));
  }
  xffl_group_t *world_group = NULL;
  rc = xffl_get_group(st, XFFL_GROUP_WORLD, 0, &world_group);
  if (rc == XFFL_OK) rc = xffl_barrier(world_group);
  if (rc != XFFL_OK) {
    fault_record("xffl_get_group + xffl_barrier", rc, fault_now_ms());
    fault_check(0, "the barrier before the allreduce failed; this scenario starts after it");
    return fault_finish("collective_loss");
  }
  const char *group_name = xffl_group_description(world_group);

  if (rank == victim) {
    watch_t watch = {output, count, by_signal};
    pthread_t watcher;
    if (pthread_create(&watcher, NULL, watch_output, &watch) != 0) return 2;
    rc = xffl_allreduce(world_group, input, output, count, XFFL_F32, XFFL_SUM, NULL);
    if (by_signal) raise(SIGKILL);
    fault_vanish(rc == XFFL_OK ? "after the allreduce finished (the watcher was too late)"
                               : "after the allreduce failed (the watcher was too late)");
  }

  fault_seen_t seen;
  int attempt = 0;
  do {
    ++attempt;
    const double started = fault_now_ms();
    rc = xffl_allreduce(world_group, input, output, count, XFFL_F32, XFFL_SUM, NULL);
    seen = fault_record(attempt == 1 ? "allreduce during which the victim died" : "allreduce after the victim left",
                        rc, started);
  } while (rc == XFFL_OK && attempt < 2);
  fault_expect_peer_loss(&seen, "allreduce", victim);
  fault_check(fault_contains(seen.message, group_name), "allreduce: the message does not name the group '%s'",
              group_name);

  fault_check(fault_meet("survivors", world - 1, 2 * fault_timeout_ms()), "not every surviving rank got this far");
  const double destroy_started = fault_now_ms();
  xffl_state_destroy(st);
  printf("rank %d: xffl_state_destroy returned after %.0f ms\n", rank, fault_now_ms() - destroy_started);
  free(input);
  free(output);
  return fault_finish("collective_loss");
}
