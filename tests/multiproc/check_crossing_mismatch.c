/*
 * Run under xffl-run with federated scaling, crossing over UCX or XFFL_CROSS_FACILITY_BACKEND=wan: one
 * rank (a sender of one facility) calls xffl_federated_average with 1200 values where every other rank
 * calls with 1000 ("large": 2^20 + 200 against 2^20, where the ring's first messages have the same
 * sizes on both sides and only the wan frames' call check tells the calls apart).
 * Every rank must return XFFL_EINVAL (never a timeout, never XFFL_EPEER) with a message that names
 * both counts: the senders that cross facilities from the mismatch notices of the transport,
 * their replicas from the relay, which their sender aborts with its error. The state's groups then
 * keep returning an error.
 *
 *   check_crossing_mismatch <odd rank> [large]
 *
 * Prints "rank R: crossing mismatch checks passed" and exits 0, or names the failure and exits 1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xffl.h>

#include "rank_checks.h"

int main(int argc, char **argv) {
  if (argc != 2 && !(argc == 3 && !strcmp(argv[2], "large"))) {
    fprintf(stderr, "usage: %s <odd rank> [large]\n", argv[0]);
    return 2;
  }
  const int odd = atoi(argv[1]);
  const size_t base = argc == 3 ? (size_t)1 << 20 : 1000, more = base + 200;
  char base_words[64], more_words[64];
  snprintf(base_words, sizeof base_words, "count %zu", base);
  snprintf(more_words, sizeof more_words, "count %zu", more);
  float *values = malloc(more * sizeof *values);
  if (!values) FAIL("out of memory");
  xffl_state_t *st = NULL;
  CHECK(xffl_state_from_env(&st));
  CHECK(xffl_get_int(st, XFFL_ATTR_RANK, &my_rank));
  int sender = 0;
  CHECK(xffl_get_int(st, XFFL_ATTR_IS_SENDER, &sender));
  if (my_rank == odd && !sender) FAIL("rank %d is not a sender: pick a sender as the odd rank", odd);
  for (size_t i = 0; i < more; ++i) values[i] = (float)(my_rank + 1);

  const size_t count = my_rank == odd ? more : base;
  xffl_status_t rc = xffl_federated_average(st, values, count, XFFL_F32, NULL);
  if (rc != XFFL_EINVAL)
    FAIL("the average with a mismatched count returned %s instead of XFFL_EINVAL: %s", xffl_status_string(rc),
         xffl_last_error_message());
  const char *message = xffl_last_error_message();
  if (!strstr(message, base_words) || !strstr(message, more_words))
    FAIL("the message does not name \"%s\" and \"%s\": %s", base_words, more_words, message);
  printf("rank %d (%s): %s\n", my_rank, sender ? "sender" : "non-sender", message);

  rc = xffl_federated_average(st, values, base, XFFL_F32, NULL);
  if (rc == XFFL_OK) FAIL("the average after the mismatch returned XFFL_OK");
  xffl_state_destroy(st);
  free(values);
  printf("rank %d: crossing mismatch checks passed\n", my_rank);
  return 0;
}
