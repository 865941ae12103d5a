/*
 * One rank of the overlap benchmark (bench/facilities/overlap.sh starts it in its facility's namespace;
 * it also runs under xffl-run on loopback): a training step plus a nonblocking federated average,
 * against the two done one after the other.
 *
 *   facilities-overlap-bench COUNT ITERATIONS
 *
 * The "training step" is arithmetic over 4 MiB of this rank's own memory, repeated; its length is
 * calibrated once (rank 0's pass rate, broadcast) to match the average's own time, the case where
 * overlap can save the most (half). Then, each between world barriers, the slowest rank's time of:
 *   step        the step alone
 *   average     xffl_federated_average alone (COUNT f32)
 *   sequential  the step, then xffl_federated_average
 *   overlapped  xffl_federated_average_start, the step (xffl_request_test between passes), wait
 * Rank 0 prints one line per iteration:
 *   RESULT count=N iteration=I step=S average=S sequential=S overlapped=S
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <xffl.h>

static int my_rank = -1;

#define CHECK(call)                                                                                   \
  do {                                                                                                \
    xffl_status_t check_rc_ = (call);                                                                 \
    if (check_rc_ != XFFL_OK) {                                                                       \
      fprintf(stderr, "rank %d: %s failed: %s: %s\n", my_rank, #call, xffl_status_string(check_rc_), \
              xffl_last_error_message());                                                             \
      exit(1);                                                                                        \
    }                                                                                                 \
  } while (0)

enum { WORK = 1 << 20 }; /* floats: 4 MiB per pass */
static float work[WORK];
static volatile float sink;

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void one_pass(void) {
  for (size_t i = 0; i < WORK; ++i) work[i] = work[i] * 0.999f + 0.5f;
  sink = work[WORK / 2];
}

/* The step: `passes` passes; with a request, tested between passes (as a training loop would). */
static void step(long passes, xffl_request_t *req) {
  int done = 0;
  for (long p = 0; p < passes; ++p) {
    one_pass();
    if (req && !done) CHECK(xffl_request_test(req, &done));
  }
}

static double slowest(xffl_group_t *world, double seconds) {
  CHECK(xffl_allreduce(world, &seconds, &seconds, 1, XFFL_F64, XFFL_MAX, NULL));
  return seconds;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: facilities-overlap-bench COUNT ITERATIONS\n");
    return 2;
  }
  const size_t count = (size_t)strtoull(argv[1], NULL, 10);
  const int iterations = atoi(argv[2]);
  xffl_state_t *st = NULL;
  CHECK(xffl_state_from_env(&st));
  CHECK(xffl_get_int(st, XFFL_ATTR_RANK, &my_rank));
  xffl_group_t *world = NULL;
  CHECK(xffl_get_group(st, XFFL_GROUP_WORLD, 0, &world));
  float *shard = malloc((count ? count : 1) * sizeof(float));
  if (!shard) {
    fprintf(stderr, "rank %d: cannot allocate %zu floats\n", my_rank, count);
    return 1;
  }
  for (size_t i = 0; i < count; ++i) shard[i] = (float)((i + (size_t)my_rank) % 1000) * 0.001f;

  /* Calibration: the average's time (after a warm-up), and rank 0's passes per second. */
  CHECK(xffl_federated_average(st, shard, count, XFFL_F32, NULL));
  CHECK(xffl_barrier(world));
  double t0 = now_s();
  CHECK(xffl_federated_average(st, shard, count, XFFL_F32, NULL));
  const double average_once = slowest(world, now_s() - t0);
  t0 = now_s();
  long calibration_passes = 0;
  while (now_s() - t0 < 0.25) {
    one_pass();
    ++calibration_passes;
  }
  double passes_per_s = (double)calibration_passes / (now_s() - t0);
  CHECK(xffl_broadcast(world, &passes_per_s, 1, XFFL_F64, 0, NULL));
  const long passes = (long)(average_once * passes_per_s) + 1;

  for (int it = 0; it < iterations; ++it) {
    double seconds[4];
    CHECK(xffl_barrier(world));
    t0 = now_s();
    step(passes, NULL);
    seconds[0] = slowest(world, now_s() - t0);

    CHECK(xffl_barrier(world));
    t0 = now_s();
    CHECK(xffl_federated_average(st, shard, count, XFFL_F32, NULL));
    seconds[1] = slowest(world, now_s() - t0);

    CHECK(xffl_barrier(world));
    t0 = now_s();
    step(passes, NULL);
    CHECK(xffl_federated_average(st, shard, count, XFFL_F32, NULL));
    seconds[2] = slowest(world, now_s() - t0);

    CHECK(xffl_barrier(world));
    t0 = now_s();
    xffl_request_t *req = NULL;
    CHECK(xffl_federated_average_start(st, shard, count, XFFL_F32, NULL, &req));
    step(passes, req);
    CHECK(xffl_request_wait(req));
    xffl_request_free(req);
    seconds[3] = slowest(world, now_s() - t0);

    if (my_rank == 0) {
      printf("RESULT count=%zu iteration=%d step=%.4f average=%.4f sequential=%.4f overlapped=%.4f\n", count, it,
             seconds[0], seconds[1], seconds[2], seconds[3]);
      fflush(stdout);
    }
  }
  free(shard);
  xffl_state_destroy(st);
  return 0;
}
