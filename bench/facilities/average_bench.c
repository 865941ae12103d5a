/*
 * One rank of the two-facility averaging benchmark (bench/facilities/run.sh starts it in its facility's
 * namespace with torchrun's variables, as tests/netns does).
 *
 *   facilities-average-bench COUNT hier|flat|world ITERATIONS
 *
 * Averages COUNT f32 elements (this rank's shard) with xffl_federated_average (hier, flat), or sums them
 * over WORLD with xffl_allreduce (world: the schedules of a group whose members span both facilities,
 * world_allreduce.sh): one warm-up (endpoints connected, TCP windows open), then ITERATIONS timed
 * calls, each between two world barriers.
 * Rank 0 reads its facility's veth counters (FACILITY_VETH, /sys/class/net/<if>/statistics) around
 * the first timed average: every byte between the facilities crosses that one veth, in one
 * direction or the other. Rank 0 prints one line per iteration:
 *   RESULT impl=xffl strategy=hier count=N iteration=I seconds=S link_tx=B link_rx=B
 * seconds is the slowest rank's time from leaving the barrier to the end of its call.
 */
#include <stdint.h>
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

static long long read_counter(const char *device, const char *name) {
  char path[256];
  snprintf(path, sizeof path, "/sys/class/net/%s/statistics/%s", device, name);
  FILE *f = fopen(path, "r");
  long long value = -1;
  if (f) {
    if (fscanf(f, "%lld", &value) != 1) value = -1;
    fclose(f);
  }
  return value;
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The call timed: a federated average, or a sum over WORLD (in place; the values only grow). */
static xffl_status_t timed_call(int world_sum, xffl_state_t *st, xffl_group_t *world, float *shard, size_t count) {
  if (world_sum) return xffl_allreduce(world, shard, shard, count, XFFL_F32, XFFL_SUM, NULL);
  return xffl_federated_average(st, shard, count, XFFL_F32, NULL);
}

int main(int argc, char **argv) {
  if (argc != 4 || (strcmp(argv[2], "hier") != 0 && strcmp(argv[2], "flat") != 0 && strcmp(argv[2], "world") != 0)) {
    fprintf(stderr, "usage: facilities-average-bench COUNT hier|flat|world ITERATIONS\n");
    return 2;
  }
  const size_t count = (size_t)strtoull(argv[1], NULL, 10);
  const int flat = strcmp(argv[2], "flat") == 0;
  const int world_sum = strcmp(argv[2], "world") == 0;
  const int iterations = atoi(argv[3]);
  const char *veth = getenv("FACILITY_VETH");

  xffl_state_t *st = NULL;
  CHECK(xffl_state_from_env(&st));
  CHECK(xffl_get_int(st, XFFL_ATTR_RANK, &my_rank));
  CHECK(xffl_set_option(st, XFFL_OPT_FEDERATED_STRATEGY, flat ? XFFL_FEDAVG_FLAT : XFFL_FEDAVG_HIERARCHICAL));
  xffl_group_t *world = NULL;
  CHECK(xffl_get_group(st, XFFL_GROUP_WORLD, 0, &world));

  float *shard = malloc(count * sizeof(float));
  if (!shard) {
    fprintf(stderr, "rank %d: cannot allocate %zu floats\n", my_rank, count);
    return 1;
  }
  for (size_t i = 0; i < count; ++i) shard[i] = (float)((i + (size_t)my_rank) % 1000) * 0.001f;

  CHECK(timed_call(world_sum, st, world, shard, count)); /* warm-up */
  for (int it = 0; it < iterations; ++it) {
    CHECK(xffl_barrier(world));
    long long tx0 = 0, rx0 = 0;
    if (my_rank == 0 && veth) {
      tx0 = read_counter(veth, "tx_bytes");
      rx0 = read_counter(veth, "rx_bytes");
    }
    CHECK(xffl_barrier(world));
    const double start = now_s();
    CHECK(timed_call(world_sum, st, world, shard, count));
    double elapsed = now_s() - start;
    CHECK(xffl_allreduce(world, &elapsed, &elapsed, 1, XFFL_F64, XFFL_MAX, NULL));
    if (my_rank == 0) {
      const long long tx = veth ? read_counter(veth, "tx_bytes") - tx0 : -1;
      const long long rx = veth ? read_counter(veth, "rx_bytes") - rx0 : -1;
      /* The wire format of the WAN hop (XFFL_WIRE_FORMAT in the environment, read by xffl_state_from_env). */
      static const char *const wire_names[] = {"f32", "bf16", "f16", "int8_block", "int4_block"};
      int wire = 0;
      CHECK(xffl_get_option(st, XFFL_OPT_WIRE_FORMAT, &wire));
      printf("RESULT impl=xffl strategy=%s count=%zu iteration=%d seconds=%.4f link_tx=%lld link_rx=%lld wire=%s\n",
             argv[2], count, it, elapsed, tx, rx, wire >= 0 && wire <= 4 ? wire_names[wire] : "unknown");
      fflush(stdout);
    }
  }
  free(shard);
  xffl_state_destroy(st);
  return 0;
}
