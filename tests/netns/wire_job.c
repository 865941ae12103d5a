/*
 * One rank of a two-facility job with a compressing wire format (XFFL_WIRE_FORMAT, set by CTest in the
 * environment of run_netns_test.sh, which the ranks inherit). Started like facility_job.c.
 *
 *   wire_job check
 *     Reads XFFL_OPT_WIRE_FORMAT (it must be what XFFL_WIRE_FORMAT named and not F32), then for
 *     HIERARCHICAL (and FLAT when the facilities are equal): one average of COUNT f32 values in that
 *     format and one with XFFL_OPT_WIRE_FORMAT = F32, each between two WORLD barriers around which rank
 *     0 reads its facility's veth counters (FACILITY_VETH: every byte between the facilities crosses it).
 *     Checks:
 *       - every rank of both facilities holds the same bytes (checksums allgathered over WORLD);
 *       - the error against the f64 mean is within the format's bound (the bounds of
 *         tests/multiproc/check_wire_formats.c: per contribution, relative for bf16/f16, to the block's
 *         largest |x| for the block formats);
 *       - (rank 0) the link carried fewer bytes than with F32: at most MAX_RATIO x F32's bytes.
 *     For HIERARCHICAL the non-senders start from other bytes, so a missing broadcast cannot go unseen.
 *     Prints "rank R: N checks passed" and exits 0, or names the failure and exits 1.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xffl.h>

#define CHECK(call)                                                                                    \
  do {                                                                                                 \
    xffl_status_t check_rc_ = (call);                                                                  \
    if (check_rc_ != XFFL_OK) {                                                                        \
      fprintf(stderr, "rank %d: %s failed: %s: %s\n", rank, #call, xffl_status_string(check_rc_),      \
              xffl_last_error_message());                                                              \
      exit(1);                                                                                         \
    }                                                                                                  \
  } while (0)

static int rank = -1;
static long checks = 0;

/* 2 Mi values (8 MiB of f32) and a partial last block: large enough that the payload dwarfs the
 * barriers' and TCP's overhead in the byte counts, small enough for a loaded machine. */
static const size_t kCount = ((size_t)2 << 20) + 77;

/* Each format's bound of |decoded - x| (as in check_wire_formats.c) and its largest byte ratio to
 * F32 over two facilities: the all-gather of the compressed copy moves (G-1) x the format's size per
 * sender, the f32 ring 2(G-1)/G (wan_hop.h): bf16 0.5, int8_block 0.254, int4_block 0.141, plus the
 * scale bytes, headers and acknowledgements. */
typedef struct {
  xffl_wire_format_t format;
  const char *name;
  double relative;
  size_t block;
  double max_ratio;
} format_bound_t;

static const format_bound_t kFormats[] = {
    {XFFL_WIRE_BF16, "bf16", 1.0 / 256, 0, 0.6},
    {XFFL_WIRE_F16, "f16", 1.0 / 2048, 0, 0.6},
    {XFFL_WIRE_INT8_BLOCK, "int8_block", 0.5 / 127, 256, 0.35},
    {XFFL_WIRE_INT4_BLOCK, "int4_block", 0.5 / 7, 64, 0.25},
};

static int get(const xffl_state_t *st, xffl_attr_t attr) {
  int value = 0;
  CHECK(xffl_get_int(st, attr, &value));
  return value;
}

/* Facility f's value at index i: not representable in any narrow format, of mixed scale. */
static float facility_value(int facility, size_t i) {
  return (float)(sin(0.013 * (double)i * (facility + 1) + facility) * (1.0 + 0.5 * facility) +
                 (i % 97 == 0 ? 3.0 * (facility + 1) : 0.0));
}

static uint64_t fnv1a(const void *data, size_t bytes) {
  const unsigned char *p = data;
  uint64_t hash = 1469598103934665603ULL;
  for (size_t i = 0; i < bytes; ++i) hash = (hash ^ p[i]) * 1099511628211ULL;
  return hash;
}

static long long read_counter(const char *device, const char *name) {
  char path[256];
  snprintf(path, sizeof path, "/sys/class/net/%s/statistics/%s", device, name);
  FILE *f = fopen(path, "r");
  long long value = -1;
  if (f) {
    if (fscanf(f, "%lld", &value) != 1) value = -1;
    fclose(f);
  }
  if (value < 0) {
    fprintf(stderr, "rank %d: cannot read %s\n", rank, path);
    exit(1);
  }
  return value;
}

/* Bytes that crossed the link both ways so far (rank 0 only; 0 elsewhere). */
static long long link_bytes(void) {
  if (rank != 0) return 0;
  const char *veth = getenv("FACILITY_VETH");
  if (!veth || !*veth) {
    fprintf(stderr, "rank 0: FACILITY_VETH is not set: run under run_netns_test.sh\n");
    exit(1);
  }
  return read_counter(veth, "tx_bytes") + read_counter(veth, "rx_bytes");
}

/* Every rank of both facilities holds the same bytes. */
static void check_identical(xffl_group_t *world, int world_size, const float *x, const char *what) {
  int64_t mine = (int64_t)fnv1a(x, kCount * sizeof(float));
  int64_t *all = malloc(sizeof(int64_t) * (size_t)world_size);
  CHECK(xffl_allgather(world, &mine, all, 1, XFFL_I64, NULL));
  for (int r = 0; r < world_size; ++r)
    if (all[r] != mine) {
      fprintf(stderr, "rank %d: %s: rank %d holds other bytes (checksum %016llx, here %016llx)\n", rank, what, r,
              (unsigned long long)all[r], (unsigned long long)mine);
      exit(1);
    }
  free(all);
  ++checks;
}

/* |x[i] - f64 mean| within the format's bound (NULL: f32 roundings only), for every i. Returns the
 * largest error. */
static double check_bound(const float *x, int facilities, const format_bound_t *fmt, const char *what) {
  double worst = 0, block_max[2] = {0, 0};
  size_t cached_block = (size_t)-1;
  for (size_t i = 0; i < kCount; ++i) {
    if (fmt && fmt->block && i / fmt->block != cached_block) { /* each facility's largest |x| of i's block */
      cached_block = i / fmt->block;
      const size_t first = cached_block * fmt->block;
      const size_t last = first + fmt->block < kCount ? first + fmt->block : kCount;
      for (int f = 0; f < facilities; ++f) {
        block_max[f] = 0;
        for (size_t q = first; q < last; ++q)
          if (fabs(facility_value(f, q)) > block_max[f]) block_max[f] = fabs(facility_value(f, q));
      }
    }
    double mean = 0, bound = 0, largest = 0;
    for (int f = 0; f < facilities; ++f) {
      mean += (double)facility_value(f, i) / facilities;
      const double reference = fmt && fmt->block ? block_max[f] : fabs(facility_value(f, i));
      if (reference > largest) largest = reference;
      bound += (fmt ? fmt->relative : 0) * reference / facilities;
    }
    /* f32 rounding of the sum and the division; f16's subnormal range (absolute 2^-25). */
    bound = bound * (1 + 1e-5) + 8.0 * facilities * FLT_EPSILON * largest + 6e-8;
    const double error = fabs((double)x[i] - mean);
    if (error > bound) {
      fprintf(stderr, "rank %d: %s: index %zu is %.9g, the f64 mean is %.9g: error %.3g above the bound %.3g\n", rank,
              what, i, (double)x[i], mean, error, bound);
      exit(1);
    }
    if (error > worst) worst = error;
  }
  ++checks;
  return worst;
}

/* One average in the current wire format; returns the bytes that crossed the link (rank 0). */
static long long measured_average(xffl_state_t *st, xffl_group_t *world, float *x, int garbage) {
  const int facility = get(st, XFFL_ATTR_FEDERATED_RANK);
  int is_sender = 1;
  (void)xffl_get_int(st, XFFL_ATTR_IS_SENDER, &is_sender);
  for (size_t i = 0; i < kCount; ++i) x[i] = garbage && !is_sender ? -12345.0f : facility_value(facility, i);
  CHECK(xffl_barrier(world));
  const long long before = link_bytes();
  CHECK(xffl_federated_average(st, x, kCount, XFFL_F32, NULL));
  CHECK(xffl_barrier(world));
  return link_bytes() - before;
}

static void run_strategy(xffl_state_t *st, xffl_group_t *world, const format_bound_t *fmt,
                         xffl_federated_strategy_t strategy) {
  const char *name = strategy == XFFL_FEDAVG_FLAT ? "FLAT" : "HIERARCHICAL";
  const int garbage = strategy == XFFL_FEDAVG_HIERARCHICAL;
  const int world_size = get(st, XFFL_ATTR_WORLD_SIZE);
  const int facilities = get(st, XFFL_ATTR_FEDERATED_WORLD_SIZE);
  CHECK(xffl_set_option(st, XFFL_OPT_FEDERATED_STRATEGY, strategy));
  float *x = calloc(kCount, sizeof(float));
  char what[160];

  /* Connections up (both formats use the same endpoints) before anything is counted. */
  CHECK(xffl_federated_average(st, x, 1000, XFFL_F32, NULL));

  snprintf(what, sizeof what, "%s %s average of %zu f32", name, fmt->name, kCount);
  const long long compressed = measured_average(st, world, x, garbage);
  check_identical(world, world_size, x, what);
  const double worst = check_bound(x, facilities, fmt, what);

  CHECK(xffl_set_option(st, XFFL_OPT_WIRE_FORMAT, XFFL_WIRE_F32));
  snprintf(what, sizeof what, "%s f32 average of %zu f32", name, kCount);
  const long long exact = measured_average(st, world, x, garbage);
  check_identical(world, world_size, x, what);
  check_bound(x, facilities, NULL, what);
  CHECK(xffl_set_option(st, XFFL_OPT_WIRE_FORMAT, fmt->format));

  if (rank == 0) {
    const double ratio = (double)compressed / (double)exact;
    printf("rank 0: %s %s: %lld bytes crossed the link, f32: %lld (%.3fx, at most %.2fx); largest error %.3g\n",
           name, fmt->name, compressed, exact, ratio, fmt->max_ratio, worst);
    if (!(ratio <= fmt->max_ratio)) {
      fprintf(stderr, "rank 0: %s %s moved %lld bytes over the link, %.3fx of f32's %lld: more than %.2fx\n", name,
              fmt->name, compressed, ratio, exact, fmt->max_ratio);
      exit(1);
    }
    ++checks;
  }
  free(x);
}

int main(int argc, char **argv) {
  if (argc != 2 || strcmp(argv[1], "check") != 0) {
    fprintf(stderr, "usage: XFFL_WIRE_FORMAT=FORMAT wire_job check\n");
    return 2;
  }
  const char *rank_env = getenv("RANK");
  rank = rank_env ? atoi(rank_env) : -1;
  xffl_state_t *st = NULL;
  CHECK(xffl_state_from_env(&st));
  int format = -1;
  CHECK(xffl_get_option(st, XFFL_OPT_WIRE_FORMAT, &format));
  const format_bound_t *fmt = NULL;
  for (size_t k = 0; k < sizeof kFormats / sizeof kFormats[0]; ++k)
    if ((int)kFormats[k].format == format) fmt = &kFormats[k];
  const char *env = getenv("XFFL_WIRE_FORMAT");
  if (!fmt || !env || strcmp(env, fmt->name) != 0) {
    fprintf(stderr, "rank %d: XFFL_OPT_WIRE_FORMAT reads %d with XFFL_WIRE_FORMAT=%s: expected a compressing format\n",
            rank, format, env ? env : "(unset)");
    return 1;
  }
  if (get(st, XFFL_ATTR_FEDERATED_WORLD_SIZE) != 2) {
    fprintf(stderr, "rank %d: wire_job expects two facilities\n", rank);
    return 1;
  }
  xffl_group_t *world = NULL;
  CHECK(xffl_get_group(st, XFFL_GROUP_WORLD, 0, &world));

  int sizes[64];
  size_t n = 0;
  CHECK(xffl_get_ints(st, XFFL_ATTR_FEDERATED_LOCAL_SIZE, sizes, 64, &n));
  run_strategy(st, world, fmt, XFFL_FEDAVG_HIERARCHICAL);
  if (n == 2 && sizes[0] == sizes[1]) run_strategy(st, world, fmt, XFFL_FEDAVG_FLAT); /* FLAT: equal facilities */

  printf("rank %d: %ld checks passed\n", rank, checks);
  xffl_state_destroy(st);
  return 0;
}
