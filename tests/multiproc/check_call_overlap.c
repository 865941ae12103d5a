/*
 * Run under xffl-run (2 ranks): two threads of one process calling into one state at once. Rank 0's
 * second thread is inside xffl_barrier on the world group, which cannot complete until rank 1 joins;
 * rank 1 joins only once rank 0 has seen what it tests (a file in the directory given). Meanwhile
 * rank 0's main thread calls into the state and into the group: every call returns XFFL_ESTATE at
 * once, naming xffl_barrier. Then the barrier completes and the state works on both ranks.
 *
 *   check_call_overlap <directory for the go-ahead file>
 *
 * Prints "rank R: overlap checks passed" and exits 0, or names the failure and exits 1.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <xffl.h>

#include "rank_checks.h"


enum { kWaitSeconds = 60 };

static xffl_group_t *world;
static xffl_status_t barrier_status = XFFL_EINTERNAL;
static char barrier_message[512];

static void *barrier_thread(void *unused) {
  (void)unused;
  /* The main thread's calls hold the state for moments of their own: until this barrier gets in, it
     gets XFFL_ESTATE naming them, and tries again. */
  while ((barrier_status = xffl_barrier(world)) == XFFL_ESTATE) {
  }
  snprintf(barrier_message, sizeof barrier_message, "%s", xffl_last_error_message());
  return NULL;
}

static void expect_busy(xffl_status_t rc, const char *what) {
  if (rc != XFFL_ESTATE) FAIL("%s during the barrier returned %s: %s", what, xffl_status_string(rc), xffl_last_error_message());
  if (!strstr(xffl_last_error_message(), "xffl_barrier is in progress"))
    FAIL("%s: the message does not name the call in progress: %s", what, xffl_last_error_message());
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s <directory>\n", argv[0]);
    return 2;
  }
  char go_ahead[4096];
  snprintf(go_ahead, sizeof go_ahead, "%s/overlap-go-ahead-%d", argv[1], (int)getppid());
  xffl_state_t *st = NULL;
  CHECK(xffl_state_from_env(&st));
  CHECK(xffl_get_int(st, XFFL_ATTR_RANK, &my_rank));
  CHECK(xffl_get_group(st, XFFL_GROUP_WORLD, 0, &world));
  CHECK(xffl_barrier(world)); /* both ranks connected before the test */

  if (my_rank == 1) {
    /* Polls for rank 0's go-ahead (a wait on another process, with a timeout), then joins. */
    const time_t give_up = time(NULL) + kWaitSeconds;
    while (access(go_ahead, F_OK) != 0) {
      if (time(NULL) > give_up) FAIL("rank 0's go-ahead %s did not come within %d s", go_ahead, kWaitSeconds);
      usleep(1000);
    }
    CHECK(xffl_barrier(world));
  } else {
    pthread_t thread;
    if (pthread_create(&thread, NULL, barrier_thread, NULL) != 0) FAIL("pthread_create failed");
    /* Until the thread is inside the barrier, calls pass; from then on, until rank 1 joins, each gets
       XFFL_ESTATE. The barrier cannot end before rank 1 joins, so the first ESTATE comes. */
    int option = 0;
    const time_t give_up = time(NULL) + kWaitSeconds;
    xffl_status_t rc;
    while ((rc = xffl_get_option(st, XFFL_OPT_TIMEOUT_MS, &option)) == XFFL_OK)
      if (time(NULL) > give_up) FAIL("the barrier thread never seemed to enter the barrier");
    expect_busy(rc, "xffl_get_option");
    int value = 1, sum = 0;
    expect_busy(xffl_allreduce(world, &value, &sum, 1, XFFL_I32, XFFL_SUM, NULL), "xffl_allreduce");
    expect_busy(xffl_set_option(st, XFFL_OPT_TIMEOUT_MS, 30000), "xffl_set_option");
    xffl_group_t *group = NULL;
    expect_busy(xffl_get_group(st, XFFL_GROUP_WORLD, 0, &group), "xffl_get_group");
    expect_busy(xffl_barrier(world), "xffl_barrier");
    /* Tell rank 1 to join, then the barrier completes. */
    FILE *file = fopen(go_ahead, "w");
    if (!file) FAIL("cannot create %s", go_ahead);
    fclose(file);
    pthread_join(thread, NULL);
    remove(go_ahead);
    if (barrier_status != XFFL_OK) FAIL("the barrier thread's barrier failed: %s", barrier_message);
  }

  /* The state works afterwards, from either thread. */
  int value = my_rank + 1, sum = 0;
  CHECK(xffl_allreduce(world, &value, &sum, 1, XFFL_I32, XFFL_SUM, NULL));
  if (sum != 3) FAIL("the allreduce after the overlap gave %d instead of 3", sum);
  CHECK(xffl_set_option(st, XFFL_OPT_TIMEOUT_MS, 30000));
  xffl_state_destroy(st);
  printf("rank %d: overlap checks passed\n", my_rank);
  return 0;
}
