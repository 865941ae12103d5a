/*
 * An allreduce followed by one read of its output, as a training step's optimizer reads the reduced
 * gradients: what a copy into the output costs or saves once the caller reads it (streaming stores
 * leave none of it in the cache). Run under xffl-run; rank 0 prints the mean over ITERS steps of the
 * allreduce, the read and the two together, in ms. Never a test.
 * Run: xffl-run -n N [--bind core] -- allreduce_then_read [SIZE_MIB [ITERS]]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <xffl.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int fail(const char *what) {
  fprintf(stderr, "allreduce_then_read: %s: %s\n", what, xffl_last_error_message());
  return 1;
}

int main(int argc, char **argv) {
  const size_t mib = argc > 1 ? (size_t)atol(argv[1]) : 64;
  const int iters = argc > 2 ? atoi(argv[2]) : 20, warmup = 3;
  if (mib < 1 || iters < 1) {
    fprintf(stderr, "usage: allreduce_then_read [SIZE_MIB >= 1 [ITERS >= 1]]\n");
    return 2;
  }
  const size_t count = (mib << 20) / sizeof(float);
  xffl_state_t *state = NULL;
  xffl_group_t *world = NULL;
  if (xffl_state_from_env(&state) != XFFL_OK) return fail("xffl_state_from_env");
  if (xffl_get_group(state, XFFL_GROUP_WORLD, 0, &world) != XFFL_OK) return fail("xffl_get_group");
  float *send = NULL, *recv = NULL;
  if (posix_memalign((void **)&send, 64, count * sizeof(float)) || posix_memalign((void **)&recv, 64, count * sizeof(float))) {
    fprintf(stderr, "allreduce_then_read: out of memory\n");
    return 1;
  }
  for (size_t i = 0; i < count; ++i) {
    send[i] = (float)(i % 7);
    recv[i] = 0.0f;
  }
  double reduce_seconds = 0, read_seconds = 0, checksum = 0;
  for (int step = 0; step < warmup + iters; ++step) {
    if (xffl_barrier(world) != XFFL_OK) return fail("xffl_barrier");
    const double start = now();
    if (xffl_allreduce(world, send, recv, count, XFFL_F32, XFFL_SUM, NULL) != XFFL_OK) return fail("xffl_allreduce");
    const double reduced = now();
    /* Eight sums at once: the read runs at the memory's pace, not at one addition's latency. */
    float sums[8] = {0};
    for (size_t i = 0; i + 8 <= count; i += 8)
      for (int k = 0; k < 8; ++k) sums[k] += recv[i + (size_t)k];
    const double read = now();
    for (int k = 0; k < 8; ++k) checksum += sums[k];
    if (step >= warmup) {
      reduce_seconds += reduced - start;
      read_seconds += read - reduced;
    }
  }
  const char *rank = getenv("RANK");
  if (rank && strcmp(rank, "0") == 0)
    printf("{\"tool\": \"allreduce_then_read\", \"size_mib\": %zu, \"iters\": %d, \"allreduce_ms\": %.3f, "
           "\"read_ms\": %.3f, \"total_ms\": %.3f, \"checksum\": %.6g}\n",
           mib, iters, reduce_seconds / iters * 1e3, read_seconds / iters * 1e3,
           (reduce_seconds + read_seconds) / iters * 1e3, checksum);
  free(send);
  free(recv);
  xffl_state_destroy(state);
  return 0;
}
