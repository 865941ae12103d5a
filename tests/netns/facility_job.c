/*
 * One rank of a two-facility job, started by run_netns_test.sh inside its facility's network namespace
 * with torchrun's variables (RANK, WORLD_SIZE, MASTER_ADDR, ...) and XFFL_FEDERATED / XFFL_HSDP /
 * XFFL_BACKEND=ucx / XFFL_TIMEOUT.
 *
 *   facility_job check
 *     Allreduces over WORLD, across the link (small, middle and multi-MiB sizes: every schedule across
 *     hosts), exact and bit-identical on every rank. Federated averages over the link for each
 *     strategy the layout allows (HIERARCHICAL; FLAT when the facilities are equal), in f32, f64 and
 *     bf16, small and multi-MiB, one _many call and one weighted (1, 3) average. Each shard holds
 *     values that depend on facility and shard; the result must equal the mean exactly (the values are
 *     chosen so the mean is exact), and every copy of every shard must be bit-identical (checksums
 *     allgathered over WORLD). For HIERARCHICAL the non-senders start from different bytes, so a
 *     missing broadcast cannot go unseen. Prints
 *     "rank R: N checks passed" and exits 0, or names the failure and exits 1.
 *
 *   facility_job cut SIGNAL_DIR COUNT
 *     One small average (connections up), then creates SIGNAL_DIR/started.RANK and averages COUNT f32
 *     elements again and again until a call fails; the driver cuts the link meanwhile. Prints
 *     "rank R: link cut: XFFL_E...: message (after S s)" and exits 3 when the failure is ETIMEOUT,
 *     EPEER or ENETWORK; exits 1 on any other status, or if 1000 averages all succeed.
 *
 *   facility_job connect SIGNAL_DIR
 *     One small average (the crossing pairs connected), creates SIGNAL_DIR/started.RANK, waits for
 *     SIGNAL_DIR/cut (the driver has cut the link), then a barrier over WORLD: its first messages to
 *     ranks this rank never talked to make new endpoints, some to the facility across the cut link,
 *     whose host no packet reaches. Prints "rank R: after the cut: XFFL_E...: message (after S s)" and
 *     exits 3 when the barrier fails with ETIMEOUT, EPEER or ENETWORK; 1 otherwise (or if it succeeds).
 *
 *   facility_job tamper COUNT
 *     With the wan crossing backend encrypted while the relay flips one byte on the link: averages COUNT
 *     f32 elements (HIERARCHICAL) a few times. A rank whose average succeeds must hold the exact mean
 *     (else exit 1: a wrong model). The first failure prints "rank R: tampered: XFFL_E...: message" and
 *     exits 4 for XFFL_EAUTH (the receiving side), 3 for ETIMEOUT / EPEER / ENETWORK (ranks that lost a
 *     peer which failed), 1 otherwise. Exits 0 when every average succeeded exactly.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <xffl.h>

#define CHECK(call)                                                                                    \
  do {                                                                                                 \
    xffl_status_t check_rc_ = (call);                                                                  \
    if (check_rc_ != XFFL_OK) {                                                                        \
      fprintf(stderr, "rank %d: %s failed: %s: %s\n", me.rank, #call, xffl_status_string(check_rc_),   \
              xffl_last_error_message());                                                              \
      exit(1);                                                                                         \
    }                                                                                                  \
  } while (0)

/* Who this rank is in the layout. */
struct identity {
  int rank, world, facility, facilities, shard, is_sender, symmetric;
};
static struct identity me = {-1, 0, 0, 0, 0, 1, 1};
static long checks = 0;

static int get_int(xffl_state_t *st, xffl_attr_t attr) {
  int value = 0;
  CHECK(xffl_get_int(st, attr, &value));
  return value;
}

static void read_identity(xffl_state_t *st) {
  me.rank = get_int(st, XFFL_ATTR_RANK);
  me.world = get_int(st, XFFL_ATTR_WORLD_SIZE);
  me.facility = get_int(st, XFFL_ATTR_FEDERATED_RANK);
  me.facilities = get_int(st, XFFL_ATTR_FEDERATED_WORLD_SIZE);
  me.shard = 0;
  me.is_sender = 1;
  if (xffl_is_hsdp_setup(st)) {
    me.shard = get_int(st, XFFL_ATTR_REPLICA_LOCAL_RANK);
    me.is_sender = get_int(st, XFFL_ATTR_IS_SENDER);
  }
  int sizes[64];
  size_t n = 0;
  CHECK(xffl_get_ints(st, XFFL_ATTR_FEDERATED_LOCAL_SIZE, sizes, 64, &n));
  me.symmetric = 1;
  for (size_t k = 1; k < n; ++k) me.symmetric &= sizes[k] == sizes[0];
}

/* The value facility f holds at index i of shard p: a multiple of `scale` below 64 * scale, so means
 * over the facilities (and the (1, 3) weighted mean, scale 4) are exact integers in every dtype used. */
static double contribution(int f, int p, size_t i, int scale) {
  return (double)(((i * (size_t)(3 + 2 * f)) + (size_t)p * 5 + (size_t)f * 11) % 64) * scale;
}

static uint16_t to_bf16(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return (uint16_t)(u >> 16); /* exact for the small integers used here */
}
static float from_bf16(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static size_t dtype_size(xffl_dtype_t t) { return t == XFFL_F64 ? 8 : t == XFFL_F32 ? 4 : 2; }
static const char *dtype_name(xffl_dtype_t t) { return t == XFFL_F64 ? "f64" : t == XFFL_F32 ? "f32" : "bf16"; }

static void put(void *buf, size_t i, xffl_dtype_t t, double v) {
  if (t == XFFL_F64) ((double *)buf)[i] = v;
  else if (t == XFFL_F32) ((float *)buf)[i] = (float)v;
  else ((uint16_t *)buf)[i] = to_bf16((float)v);
}
static double get(const void *buf, size_t i, xffl_dtype_t t) {
  if (t == XFFL_F64) return ((const double *)buf)[i];
  if (t == XFFL_F32) return ((const float *)buf)[i];
  return from_bf16(((const uint16_t *)buf)[i]);
}

static uint64_t fnv1a(const void *data, size_t bytes) {
  const unsigned char *p = data;
  uint64_t hash = 1469598103934665603ULL;
  for (size_t i = 0; i < bytes; ++i) hash = (hash ^ p[i]) * 1099511628211ULL;
  return hash;
}

/* Every rank holding shard p must hold the same bytes: gather (shard, checksum) from the whole world. */
static void check_copies_identical(xffl_group_t *world, const void *buf, size_t bytes, const char *what) {
  int64_t mine[2] = {me.shard, (int64_t)fnv1a(buf, bytes)};
  int64_t *all = malloc(sizeof(int64_t) * 2 * (size_t)me.world);
  CHECK(xffl_allgather(world, mine, all, 2, XFFL_I64, NULL));
  for (int r = 0; r < me.world; ++r)
    if (all[2 * r] == mine[0] && all[2 * r + 1] != mine[1]) {
      fprintf(stderr, "rank %d: %s: shard %d differs between rank %d and rank %d after the average\n", me.rank, what,
              me.shard, me.rank, r);
      exit(1);
    }
  free(all);
  ++checks;
}

struct average_case {
  xffl_federated_strategy_t strategy;
  xffl_dtype_t dtype;
  size_t count;
  int weighted; /* weights (1, 3): scale 4 */
  int many;     /* through xffl_federated_average_many, split in three unequal buffers */
};

/* The exact result at index i: the (weighted) mean over facilities of their senders' contribution. */
static double expected(const struct average_case *c, size_t i) {
  const int scale = c->weighted ? 4 : me.facilities;
  double sum = 0, weights = 0;
  for (int f = 0; f < me.facilities; ++f) {
    const double w = c->weighted ? (f == 0 ? 1.0 : 3.0) : 1.0;
    sum += w * contribution(f, me.shard, i, scale);
    weights += w;
  }
  return sum / weights;
}

static void run_case(xffl_state_t *st, xffl_group_t *world, const struct average_case *c) {
  char what[160];
  snprintf(what, sizeof what, "%s %s count %zu%s%s",
           c->strategy == XFFL_FEDAVG_FLAT ? "FLAT" : "HIERARCHICAL", dtype_name(c->dtype), c->count,
           c->weighted ? " weighted (1,3)" : "", c->many ? " via _many" : "");
  const int scale = c->weighted ? 4 : me.facilities;
  unsigned char *buf = malloc(c->count * dtype_size(c->dtype));
  for (size_t i = 0; i < c->count; ++i) {
    double v = contribution(me.facility, me.shard, i, scale);
    /* HIERARCHICAL takes the sender's copy: other replicas start from other bytes to prove the broadcast. */
    if (c->strategy == XFFL_FEDAVG_HIERARCHICAL && !me.is_sender) v = -(v + 2);
    put(buf, i, c->dtype, v);
  }
  CHECK(xffl_set_option(st, XFFL_OPT_FEDERATED_STRATEGY, c->strategy));
  if (c->weighted) {
    const double weights[2] = {1.0, 3.0};
    CHECK(xffl_set_federated_weights(st, weights, 2));
  }
  if (c->many) {
    const size_t esz = dtype_size(c->dtype);
    const size_t counts[3] = {c->count / 5, c->count / 2, c->count - c->count / 5 - c->count / 2};
    void *bufs[3] = {buf, buf + counts[0] * esz, buf + (counts[0] + counts[1]) * esz};
    CHECK(xffl_federated_average_many(st, bufs, counts, 3, c->dtype, NULL));
  } else {
    CHECK(xffl_federated_average(st, buf, c->count, c->dtype, NULL));
  }
  if (c->weighted) CHECK(xffl_set_federated_weights(st, NULL, 0));
  for (size_t i = 0; i < c->count; ++i) {
    const double got = get(buf, i, c->dtype), want = expected(c, i);
    if (got != want) {
      fprintf(stderr, "rank %d (facility %d, shard %d%s): %s: index %zu holds %.17g, expected the mean %.17g\n",
              me.rank, me.facility, me.shard, me.is_sender ? ", sender" : "", what, i, got, want);
      exit(1);
    }
  }
  ++checks;
  check_copies_identical(world, buf, c->count * dtype_size(c->dtype), what);
  free(buf);
}

/* An allreduce over WORLD, whose members are on two hosts (the facilities' namespaces): the schedules
 * across hosts, with UCX messages over the link (recursive doubling, halving-doubling, the ring, by
 * size and member count, comm/algorithm_choice.h). Rank r holds small integers, so every partial sum is
 * exact in f32 and bf16 (at most 6 ranks x 31); the result must be the exact sum (the maximum for MAX)
 * and the same bytes on every rank. */
static double world_value(int rank, size_t i) { return (double)((i * (size_t)(3 + 2 * rank) + (size_t)rank * 7) % 32); }

static void check_world_allreduce(xffl_group_t *world, xffl_dtype_t dtype, xffl_redop_t op, size_t count) {
  char what[96];
  snprintf(what, sizeof what, "WORLD allreduce %s %s count %zu", dtype_name(dtype), op == XFFL_MAX ? "max" : "sum",
           count);
  const size_t esz = dtype_size(dtype);
  unsigned char *buf = malloc(count * esz);
  for (size_t i = 0; i < count; ++i) put(buf, i, dtype, world_value(me.rank, i));
  CHECK(xffl_allreduce(world, buf, buf, count, dtype, op, NULL));
  for (size_t i = 0; i < count; ++i) {
    double expected = 0;
    for (int r = 0; r < me.world; ++r) {
      const double v = world_value(r, i);
      expected = op == XFFL_MAX ? (r == 0 || v > expected ? v : expected) : expected + v;
    }
    if (get(buf, i, dtype) != expected) {
      fprintf(stderr, "rank %d: %s: element %zu is %g, not %g\n", me.rank, what, i, get(buf, i, dtype), expected);
      exit(1);
    }
  }
  int64_t mine = (int64_t)fnv1a(buf, count * esz);
  int64_t *all = malloc(sizeof(int64_t) * (size_t)me.world);
  CHECK(xffl_allgather(world, &mine, all, 1, XFFL_I64, NULL));
  for (int r = 0; r < me.world; ++r)
    if (all[r] != mine) {
      fprintf(stderr, "rank %d: %s: rank %d holds other bytes\n", me.rank, what, r);
      exit(1);
    }
  free(all);
  free(buf);
  ++checks;
}

static int run_checks(xffl_state_t *st) {
  xffl_group_t *world = NULL;
  CHECK(xffl_get_group(st, XFFL_GROUP_WORLD, 0, &world));
  check_world_allreduce(world, XFFL_F64, XFFL_MAX, 1001);
  check_world_allreduce(world, XFFL_F32, XFFL_SUM, 40003);
  check_world_allreduce(world, XFFL_BF16, XFFL_SUM, 100003);
  check_world_allreduce(world, XFFL_F32, XFFL_SUM, 300007);
  const xffl_dtype_t dtypes[] = {XFFL_F32, XFFL_F64, XFFL_BF16};
  const size_t counts[] = {1001, (size_t)1 << 20};
  const int strategies = me.symmetric ? 2 : 1; /* FLAT needs equal facilities */
  for (int s = 0; s < strategies; ++s)
    for (size_t d = 0; d < sizeof dtypes / sizeof *dtypes; ++d)
      for (size_t k = 0; k < sizeof counts / sizeof *counts; ++k) {
        struct average_case c = {s == 0 ? XFFL_FEDAVG_HIERARCHICAL : XFFL_FEDAVG_FLAT, dtypes[d], counts[k], 0, 0};
        run_case(st, world, &c);
      }
  struct average_case many = {XFFL_FEDAVG_HIERARCHICAL, XFFL_F32, 300007, 0, 1};
  run_case(st, world, &many);
  if (me.facilities == 2) {
    struct average_case weighted = {XFFL_FEDAVG_HIERARCHICAL, XFFL_F32, 100003, 1, 0};
    run_case(st, world, &weighted);
  }
  printf("rank %d: %ld checks passed\n", me.rank, checks);
  return 0;
}

static double seconds_since(const struct timespec *start) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)(now.tv_sec - start->tv_sec) + (double)(now.tv_nsec - start->tv_nsec) * 1e-9;
}

/* Tells the driver this rank is under way: creates SIGNAL_DIR/started.RANK. 0 (said why) if it cannot. */
static int signal_started(const char *signal_dir) {
  char path[4096];
  snprintf(path, sizeof path, "%s/started.%d", signal_dir, me.rank);
  FILE *started = fopen(path, "w");
  if (!started) {
    fprintf(stderr, "rank %d: cannot create %s\n", me.rank, path);
    return 0;
  }
  fclose(started);
  return 1;
}

static int run_cut(xffl_state_t *st, const char *signal_dir, size_t count) {
  float *buf = calloc(count, sizeof(float));
  CHECK(xffl_federated_average(st, buf, 1024, XFFL_F32, NULL)); /* endpoints connected before the cut */
  if (!signal_started(signal_dir)) return 1;
  for (int round = 0; round < 1000; ++round) {
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    const xffl_status_t rc = xffl_federated_average(st, buf, count, XFFL_F32, NULL);
    if (rc == XFFL_OK) continue;
    printf("rank %d: link cut: %s: %s (after %.1f s, round %d)\n", me.rank, xffl_status_string(rc),
           xffl_last_error_message(), seconds_since(&start), round);
    fflush(stdout);
    free(buf);
    return rc == XFFL_ETIMEOUT || rc == XFFL_EPEER || rc == XFFL_ENETWORK ? 3 : 1;
  }
  printf("rank %d: 1000 averages of %zu elements succeeded: the link was never cut\n", me.rank, count);
  free(buf);
  return 1;
}

static int run_connect(xffl_state_t *st, const char *signal_dir) {
  float small[1024] = {0};
  CHECK(xffl_federated_average(st, small, 1024, XFFL_F32, NULL)); /* the crossing pairs connected */
  if (!signal_started(signal_dir)) return 1;
  char path[4096];
  snprintf(path, sizeof path, "%s/cut", signal_dir);
  struct timespec waited;
  clock_gettime(CLOCK_MONOTONIC, &waited);
  for (;;) {
    FILE *cut = fopen(path, "r");
    if (cut) {
      fclose(cut);
      break;
    }
    if (seconds_since(&waited) > 60) {
      fprintf(stderr, "rank %d: the driver never created %s\n", me.rank, path);
      return 1;
    }
    nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL);
  }
  xffl_group_t *world = NULL;
  CHECK(xffl_get_group(st, XFFL_GROUP_WORLD, 0, &world));
  struct timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  const xffl_status_t rc = xffl_barrier(world);
  printf("rank %d: after the cut: %s: %s (after %.1f s)\n", me.rank, xffl_status_string(rc),
         rc == XFFL_OK ? "the barrier succeeded" : xffl_last_error_message(), seconds_since(&start));
  fflush(stdout);
  return rc == XFFL_ETIMEOUT || rc == XFFL_EPEER || rc == XFFL_ENETWORK ? 3 : 1;
}

static int run_tamper(xffl_state_t *st, size_t count) {
  struct average_case c = {XFFL_FEDAVG_HIERARCHICAL, XFFL_F32, count, 0, 0};
  float *buf = malloc(count * sizeof(float));
  CHECK(xffl_set_option(st, XFFL_OPT_FEDERATED_STRATEGY, c.strategy));
  for (int round = 0; round < 4; ++round) {
    for (size_t i = 0; i < count; ++i) {
      double v = contribution(me.facility, me.shard, i, me.facilities);
      if (!me.is_sender) v = -(v + 2);
      buf[i] = (float)v;
    }
    const xffl_status_t rc = xffl_federated_average(st, buf, count, XFFL_F32, NULL);
    if (rc != XFFL_OK) {
      printf("rank %d: tampered: %s: %s (round %d)\n", me.rank, xffl_status_string(rc), xffl_last_error_message(),
             round);
      fflush(stdout);
      free(buf);
      if (rc == XFFL_EAUTH) return 4;
      return rc == XFFL_ETIMEOUT || rc == XFFL_EPEER || rc == XFFL_ENETWORK ? 3 : 1;
    }
    for (size_t i = 0; i < count; ++i)
      if ((double)buf[i] != expected(&c, i)) {
        printf("rank %d: tampered: WRONG MODEL: index %zu holds %.9g, expected %.9g (round %d)\n", me.rank, i,
               (double)buf[i], expected(&c, i), round);
        free(buf);
        return 1;
      }
  }
  printf("rank %d: tampered: every average exact\n", me.rank);
  free(buf);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2 || (strcmp(argv[1], "check") != 0 && !(strcmp(argv[1], "cut") == 0 && argc == 4) &&
                   !(strcmp(argv[1], "connect") == 0 && argc == 3) && !(strcmp(argv[1], "tamper") == 0 && argc == 3))) {
    fprintf(stderr, "usage: facility_job check | facility_job cut SIGNAL_DIR COUNT | facility_job connect SIGNAL_DIR | "
                    "facility_job tamper COUNT\n");
    return 2;
  }
  xffl_state_t *st = NULL;
  CHECK(xffl_state_from_env(&st));
  read_identity(st);
  int rc;
  if (strcmp(argv[1], "check") == 0) rc = run_checks(st);
  else if (strcmp(argv[1], "tamper") == 0) rc = run_tamper(st, (size_t)strtoull(argv[2], NULL, 10));
  else if (strcmp(argv[1], "connect") == 0) rc = run_connect(st, argv[2]);
  else rc = run_cut(st, argv[2], (size_t)strtoull(argv[3], NULL, 10));
  xffl_state_destroy(st);
  return rc;
}
