/* The checks of the multi-process test programs (run under xffl-run): a failure names this process's
 * rank and what failed, then exits 1, so xffl-run's fail-fast reports it. The program sets my_rank as
 * soon as it knows it. */
#ifndef XFFL_TESTS_RANK_CHECKS_H
#define XFFL_TESTS_RANK_CHECKS_H

#include <stdio.h>
#include <stdlib.h>

#include <xffl.h>

static int my_rank = -1;

#define FAIL(...)                          \
  do {                                     \
    fprintf(stderr, "rank %d: ", my_rank); \
    fprintf(stderr, __VA_ARGS__);          \
    fprintf(stderr, "\n");                 \
    exit(1);                               \
  } while (0)

/* An xffl call that must succeed. */
#define CHECK(call)                                                                                \
  do {                                                                                             \
    xffl_status_t check_rc_ = (call);                                                              \
    if (check_rc_ != XFFL_OK)                                                                      \
      FAIL("%s failed: %s: %s", #call, xffl_status_string(check_rc_), xffl_last_error_message()); \
  } while (0)

#endif
