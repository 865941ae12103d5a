/*
 * Run under xffl-run with federated scaling: xffl_federated_average and _many, HIERARCHICAL and FLAT
 * (when the layout allows it), for small buffers and for buffers large enough for the pipelined ring
 * whose chunks are relayed to the replicas while the ring runs. Each facility starts from its own
 * values and every replica starts from different bytes, so a missing relay shows as a wrong mean.
 * Checks the exact mean on every rank and that every copy of every shard is bit-identical.
 * Prints "rank R: N checks passed" and exits 0, or names the first failure.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xffl.h>

#define CHECK(call)                                                                                \
  do {                                                                                             \
    xffl_status_t check_rc_ = (call);                                                              \
    if (check_rc_ != XFFL_OK) {                                                                    \
      fprintf(stderr, "rank %d: %s failed: %s: %s\n", rank, #call, xffl_status_string(check_rc_),  \
              xffl_last_error_message());                                                          \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

static int rank = -1;
static long checks = 0;

static int get(const xffl_state_t *st, xffl_attr_t attr) {
  int value = 0;
  CHECK(xffl_get_int(st, attr, &value));
  return value;
}

/* Facility f's value at index i: small integers, so the mean over G facilities is exact in f32/f64 when
 * G is a power of two; non-senders start from garbage that the average must overwrite. */
static double facility_value(int facility, size_t i) { return (double)((facility + 1) * (int)(i % 13)); }

static double expected_mean(int facilities, size_t i) {
  double sum = 0;
  for (int f = 0; f < facilities; ++f) sum += facility_value(f, i);
  return sum / facilities;
}

static uint64_t fnv1a(const void *data, size_t bytes) {
  const unsigned char *p = data;
  uint64_t hash = 1469598103934665603ULL;
  for (size_t i = 0; i < bytes; ++i) hash = (hash ^ p[i]) * 1099511628211ULL;
  return hash;
}

/* Every copy of shard p (all ranks with replica_local_rank p, or all ranks without HSDP) is identical. */
static void check_copies(xffl_state_t *st, const void *buf, size_t bytes, const char *what) {
  xffl_group_t *world = NULL;
  CHECK(xffl_get_group(st, XFFL_GROUP_WORLD, 0, &world));
  int shard = 0, world_size = get(st, XFFL_ATTR_WORLD_SIZE);
  if (xffl_get_int(st, XFFL_ATTR_REPLICA_LOCAL_RANK, &shard) != XFFL_OK) shard = 0;
  int64_t mine[2] = {shard, (int64_t)fnv1a(buf, bytes)};
  int64_t *all = malloc(sizeof(int64_t) * 2 * (size_t)world_size);
  CHECK(xffl_allgather(world, mine, all, 2, XFFL_I64, NULL));
  for (int r = 0; r < world_size; ++r)
    if (all[2 * r] == shard && all[2 * r + 1] != mine[1]) {
      fprintf(stderr, "rank %d: %s: rank %d holds other bytes of shard %d\n", rank, what, r, shard);
      exit(1);
    }
  free(all);
  ++checks;
}


static void one_average(xffl_state_t *st, size_t count, int replica_garbage) {
  const int facility = get(st, XFFL_ATTR_FEDERATED_RANK), facilities = get(st, XFFL_ATTR_FEDERATED_WORLD_SIZE);
  int is_sender = 1;
  (void)xffl_get_int(st, XFFL_ATTR_IS_SENDER, &is_sender);
  float *x = malloc(sizeof(float) * (count ? count : 1));
  for (size_t i = 0; i < count; ++i) x[i] = (float)facility_value(facility, i);
  /* HIERARCHICAL reads only the senders' copies: the others start from garbage to prove the relay. */
  if (replica_garbage && !is_sender)
    for (size_t i = 0; i < count; ++i) x[i] = -12345.0f;
  CHECK(xffl_federated_average(st, x, count, XFFL_F32, NULL));
  for (size_t i = 0; i < count; ++i)
    if (x[i] != (float)expected_mean(facilities, i)) {
      fprintf(stderr, "rank %d: federated_average of %zu f32: index %zu is %g, expected %g\n", rank, count, i,
              (double)x[i], expected_mean(facilities, i));
      exit(1);
    }
  check_copies(st, x, count * sizeof(float), "federated_average f32");
  free(x);
  ++checks;
}

/* bf16 goes through the widened path (f32 accumulation, narrowed once). */
static void one_average_bf16(xffl_state_t *st, size_t count) {
  const int facility = get(st, XFFL_ATTR_FEDERATED_RANK), facilities = get(st, XFFL_ATTR_FEDERATED_WORLD_SIZE);
  uint16_t *x = malloc(sizeof(uint16_t) * count);
  for (size_t i = 0; i < count; ++i) {
    float v = (float)facility_value(facility, i);
    uint32_t u;
    memcpy(&u, &v, 4);
    x[i] = (uint16_t)(u >> 16); /* exact: small integers */
  }
  CHECK(xffl_federated_average(st, x, count, XFFL_BF16, NULL));
  for (size_t i = 0; i < count; ++i) {
    uint32_t u = (uint32_t)x[i] << 16;
    float v;
    memcpy(&v, &u, 4);
    double want = expected_mean(facilities, i); /* multiples of 0.5 up to 30: exact in bf16 */
    if (v != want) {
      fprintf(stderr, "rank %d: federated_average of %zu bf16: index %zu is %g, expected %g\n", rank, count, i,
              (double)v, want);
      exit(1);
    }
  }
  check_copies(st, x, count * sizeof(uint16_t), "federated_average bf16");
  free(x);
  ++checks;
}

/* _many: buffers of mixed sizes, some coalesced into buckets, one large enough to go alone. */
static void many_average(xffl_state_t *st) {
  const int facility = get(st, XFFL_ATTR_FEDERATED_RANK), facilities = get(st, XFFL_ATTR_FEDERATED_WORLD_SIZE);
  const size_t counts[] = {3, 0, 1000, 77, 5u << 20, 12};
  enum { N = sizeof counts / sizeof counts[0] };
  float *bufs[N];
  for (int b = 0; b < N; ++b) {
    bufs[b] = malloc(sizeof(float) * (counts[b] ? counts[b] : 1));
    for (size_t i = 0; i < counts[b]; ++i) bufs[b][i] = (float)facility_value(facility, i + (size_t)b);
  }
  CHECK(xffl_federated_average_many(st, (void *const *)bufs, counts, N, XFFL_F32, NULL));
  for (int b = 0; b < N; ++b) {
    for (size_t i = 0; i < counts[b]; ++i)
      if (bufs[b][i] != (float)expected_mean(facilities, i + (size_t)b)) {
        fprintf(stderr, "rank %d: federated_average_many buffer %d index %zu is %g, expected %g\n", rank, b, i,
                (double)bufs[b][i], expected_mean(facilities, i + (size_t)b));
        exit(1);
      }
    check_copies(st, bufs[b], counts[b] * sizeof(float), "federated_average_many");
    free(bufs[b]);
  }
  ++checks;
}

int main(void) {
  xffl_state_t *st = NULL;
  const char *rank_env = getenv("RANK");
  rank = rank_env ? atoi(rank_env) : -1;
  CHECK(xffl_state_from_env(&st));
  const int facilities = get(st, XFFL_ATTR_FEDERATED_WORLD_SIZE);
  if (facilities & (facilities - 1)) {
    fprintf(stderr, "rank %d: this check needs a power-of-two number of facilities for exact means\n", rank);
    return 2;
  }
  /* 1001: recursive doubling and a tree; 3 Mi: the ring with several chunks per segment, relayed. */
  const size_t counts[] = {0, 1, 1001, (size_t)3 << 20};
  for (size_t c = 0; c < sizeof counts / sizeof counts[0]; ++c) one_average(st, counts[c], 1);
  one_average_bf16(st, (size_t)1 << 20);
  many_average(st);

  size_t n_sizes = 0;
  int sizes[64];
  CHECK(xffl_get_ints(st, XFFL_ATTR_FEDERATED_LOCAL_SIZE, sizes, 64, &n_sizes));
  int equal = 1;
  for (size_t i = 1; i < n_sizes; ++i) equal = equal && sizes[i] == sizes[0];
  if (equal) { /* FLAT is xFFL's symmetric behaviour: every rank crosses */
    CHECK(xffl_set_option(st, XFFL_OPT_FEDERATED_STRATEGY, XFFL_FEDAVG_FLAT));
    one_average(st, 1001, 0);
    one_average(st, (size_t)3 << 20, 0);
  }
  printf("rank %d: %ld checks passed\n", rank, checks);
  xffl_state_destroy(st);
  return 0;
}
