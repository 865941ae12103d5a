/*
 * A rank that dies in the middle of a large allreduce (64 MiB of f32 on WORLD). All ranks meet at a
 * barrier first; the victim then starts the allreduce, and a watcher ends the process (_exit(0), so
 * xffl-run's fail-fast stays out of it) as soon as the first reduced bytes land in its output: the
 * collective is under way on every rank. The survivors' allreduce must return XFFL_ETIMEOUT or
 * XFFL_EPEER naming the victim, and destroy must still return.
 *
 * The watcher is a child process that shares the output's pages (MAP_SHARED) and sees them change as
 * a debugger would. A thread of the victim reading the output while xffl_allreduce writes it would
 * be a data race (ThreadSanitizer reported it); another process has no such race with the victim's
 * threads. The watcher signals the victim (SIGUSR1), whose handler does only async-signal-safe work:
 * write(2) the prepared line, then _exit(0) or raise(SIGKILL).
 *
 * Should the victim's allreduce finish before its watcher runs (a scheduling accident), it leaves
 * right after; the survivors then run a second allreduce, which must fail the same way. Each
 * survivor says which of the two failed.
 *
 * With HOW = sigkill the victim dies by raise(SIGKILL) instead. xffl-run then ends the job with
 * SIGTERM (exit 137 names the victim's signal), so the survivors ignore SIGTERM until they have
 * recorded their result; give xffl-run a --grace longer than XFFL_TIMEOUT.
 *
 * usage: collective_loss [VICTIM] [SIZE] [exit|sigkill]   (default: the last rank, 64 MiB, exit)
 * SIZE: MiB, or KiB with a k suffix ("16k": the small allreduce, which members on one host run through
 * their shared segment, comm/ucx/host_collectives.h: the survivors then wait for the victim's flag).
 *
 * After xffl_state_destroy every rank checks that no mapping of a shared segment of xffl is left in
 * it (/proc/self/maps): the segments have no name in /dev/shm (memfd), so that is all that could leak.
 * FAULT_COLLECTIVE_TIMEOUT_MS, when set, replaces XFFL_TIMEOUT after the rendezvous (xffl_set_option).
 * FAULT_EXPECT_EPEER=1 accepts only XFFL_EPEER: with a long XFFL_TIMEOUT, a survivor that learned of
 * the death only by its timeout (XFFL_ETIMEOUT) fails the check. Every survivor then also learned
 * of it through the revoke notice, since only the victim's neighbours wait on it. The watcher and
 * the survivors print the monotonic clock (one per machine) when the victim is signalled and when
 * their allreduce ended: the difference is the detection time, printed, never compared to a bound.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

#include "fault_check.h"

static const float kUntouched = -1.0f; /* every contribution is positive, so no result equals it */

/* Whether a line of /proc/self/maps names `what` (a mapping of a memfd shows its name). */
static int fault_maps_contain(const char *what) {
  FILE *maps = fopen("/proc/self/maps", "r");
  if (!maps) return 0;
  char line[512];
  int found = 0;
  while (!found && fgets(line, sizeof line, maps)) found = strstr(line, what) != NULL;
  fclose(maps);
  return found;
}

/* Set before the watcher starts: the signal handler may not format or allocate. */
static char g_leaving_line[160];
static size_t g_leaving_length;
static volatile sig_atomic_t g_leave_by_sigkill;

static void on_watcher_signal(int signo) {
  (void)signo;
  ssize_t ignored = write(STDOUT_FILENO, g_leaving_line, g_leaving_length);
  (void)ignored;
  if (g_leave_by_sigkill) raise(SIGKILL);
  _exit(0);
}

/* The watcher process: polls a sample of the output (one float per 4 KiB page) until any of it
 * changes, then signals the victim. Leaves by itself once the victim is gone (it left on its own). */
static void watch_output(const volatile float *output, size_t count, pid_t victim) {
  const size_t stride = 1024;
  for (;;) {
    for (size_t i = 0; i < count; i += stride)
      if (output[i] != kUntouched) {
        printf("rank %d: the watcher signals the victim at %.1f ms (monotonic clock)\n", fault_rank(), fault_now_ms());
        fflush(stdout);
        kill(victim, SIGUSR1);
        _exit(0);
      }
    if (getppid() != victim) _exit(0);
    sched_yield();
  }
}

/* Starts the watcher process over OUTPUT (shared pages); returns 0 on success. */
static int start_watcher(const float *output, size_t count, int by_signal) {
  g_leave_by_sigkill = by_signal;
  const int length = snprintf(g_leaving_line, sizeof g_leaving_line, "rank %d: leaving %s\n", fault_rank(),
                              by_signal ? "by raise(SIGKILL) in the middle of the allreduce"
                                        : "in the middle of the allreduce (its output started to change)");
  if (length <= 0 || (size_t)length >= sizeof g_leaving_line) return -1;
  g_leaving_length = (size_t)length;
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = on_watcher_signal;
  sigemptyset(&action.sa_mask);
  if (sigaction(SIGUSR1, &action, NULL) != 0) return -1;
  fflush(stdout); /* the handler's _exit would drop what stdio still holds */
  const pid_t victim = getpid();
  const pid_t watcher = fork();
  if (watcher < 0) return -1;
  if (watcher == 0) watch_output(output, count, victim);
  return 0;
}

int main(int argc, char **argv) {
  const int rank = fault_rank(), world = fault_world();
  const int victim = argc > 1 ? atoi(argv[1]) : world - 1;
  const size_t kib = argc > 2 ? (size_t)atoi(argv[2]) * (strchr(argv[2], 'k') ? 1 : 1024) : 64 * 1024;
  const size_t count = kib * 1024 / sizeof(float);
  const int by_signal = argc > 3 && strcmp(argv[3], "sigkill") == 0;
  if (by_signal && rank != victim) signal(SIGTERM, SIG_IGN); /* xffl-run's fail-fast would end us too soon */

  /* The output is shared with the victim's watcher process (see the top of this file). */
  float *input = malloc(count * sizeof(float));
  void *shared = mmap(NULL, count * sizeof(float), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  float *output = shared == MAP_FAILED ? NULL : shared;
  if (!input || !output) {
    fprintf(stderr, "rank %d: cannot allocate 2 x %zu KiB\n", rank, kib);
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
    if (start_watcher(output, count, by_signal) != 0) {
      fprintf(stderr, "rank %d: cannot start the watcher process: %s\n", rank, strerror(errno));
      return 2;
    }
    rc = xffl_allreduce(world_group, input, output, count, XFFL_F32, XFFL_SUM, NULL);
    const char *when = rc == XFFL_OK ? "after the allreduce finished (the watcher was too late)"
                                     : "after the allreduce failed (the watcher was too late)";
    if (by_signal) { /* the line first, as the handler writes it: expect_output.sh looks for it */
      printf("rank %d: leaving by raise(SIGKILL) %s\n", rank, when);
      fflush(stdout);
      raise(SIGKILL);
    }
    fault_vanish(when);
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
  printf("rank %d: the allreduce ended at %.1f ms (monotonic clock)\n", rank, fault_now_ms());
  fault_expect_peer_loss(&seen, "allreduce", victim);
  const char *expect_epeer = getenv("FAULT_EXPECT_EPEER");
  if (expect_epeer && strcmp(expect_epeer, "1") == 0)
    fault_check(seen.status == XFFL_EPEER, "allreduce returned %s, expected XFFL_EPEER: the death was not "
                "announced to this rank before its timeout", xffl_status_string(seen.status));
  fault_check(fault_contains(seen.message, group_name), "allreduce: the message does not name the group '%s'",
              group_name);

  fault_check(fault_meet("survivors", world - 1, 2 * fault_timeout_ms()), "not every surviving rank got this far");
  const double destroy_started = fault_now_ms();
  xffl_state_destroy(st);
  printf("rank %d: xffl_state_destroy returned after %.0f ms\n", rank, fault_now_ms() - destroy_started);
  fault_check(!fault_maps_contain("xffl-host-collectives"),
              "a shared segment of xffl is still mapped after xffl_state_destroy");
  free(input);
  munmap(output, count * sizeof(float));
  return fault_finish("collective_loss");
}
