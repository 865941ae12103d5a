/*
 * Run under xffl-run with federated scaling: the wire formats of the WAN hop (XFFL_OPT_WIRE_FORMAT) and
 * error feedback (XFFL_OPT_ERROR_FEEDBACK) through the C API, HIERARCHICAL and FLAT (when the layout
 * allows it), plain and weighted, average and average_many. For every format:
 *   - every rank of every facility holds the same bytes afterwards;
 *   - the error against the f64 mean is within the format's bound (per contribution, before the mean);
 *   - F32 stays exact, and dtypes other than f32 travel exact whatever the format;
 *   - with error feedback, the sum of 50 rounds' means stays within a round's bound of 50 x the mean
 *     (without it, the same rounding repeats: printed for comparison).
 * Prints "rank R: N checks passed" and exits 0, or names the first failure.
 */
#include <float.h>
#include <math.h>
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

/* Each format's bound of |decoded - x|: relative to |x| (block 0), or to the block's largest |x|. */
typedef struct {
  xffl_wire_format_t format;
  const char *name;
  double relative;
  size_t block;
} format_bound_t;

static const format_bound_t kFormats[] = {
    {XFFL_WIRE_BF16, "bf16", 1.0 / 256, 0},
    {XFFL_WIRE_F16, "f16", 1.0 / 2048, 0},
    {XFFL_WIRE_INT8_BLOCK, "int8_block", 0.5 / 127, 256},
    {XFFL_WIRE_INT4_BLOCK, "int4_block", 0.5 / 7, 64},
};

static int get(const xffl_state_t *st, xffl_attr_t attr) {
  int value = 0;
  CHECK(xffl_get_int(st, attr, &value));
  return value;
}

/* Facility f's value at index i (of buffer b): not representable in any narrow format, of mixed scale. */
static float facility_value(int facility, size_t i, int b) {
  return (float)(sin(0.013 * (double)i * (facility + 1) + facility + 0.7 * b) * (1.0 + 0.5 * facility) +
                 (i % 97 == 0 ? 3.0 * (facility + 1) : 0.0));
}

static uint64_t fnv1a(const void *data, size_t bytes) {
  const unsigned char *p = data;
  uint64_t hash = 1469598103934665603ULL;
  for (size_t i = 0; i < bytes; ++i) hash = (hash ^ p[i]) * 1099511628211ULL;
  return hash;
}

/* Every rank of every facility holds the same bytes. */
static void check_identical(xffl_state_t *st, const void *buf, size_t bytes, const char *what) {
  xffl_group_t *world = NULL;
  CHECK(xffl_get_group(st, XFFL_GROUP_WORLD, 0, &world));
  const int world_size = get(st, XFFL_ATTR_WORLD_SIZE);
  int64_t mine = (int64_t)fnv1a(buf, bytes);
  int64_t *all = malloc(sizeof(int64_t) * (size_t)world_size);
  CHECK(xffl_allgather(world, &mine, all, 1, XFFL_I64, NULL));
  for (int r = 0; r < world_size; ++r)
    if (all[r] != mine) {
      fprintf(stderr, "rank %d: %s: rank %d holds other bytes\n", rank, what, r);
      exit(1);
    }
  free(all);
  ++checks;
}

/* The FedAvg factor of facility f: G w_f / sum(w), 1 without weights. */
static double factor(const double *weights, int facilities, int f) {
  if (!weights) return 1.0;
  double sum = 0;
  for (int g = 0; g < facilities; ++g) sum += weights[g];
  return facilities * weights[f] / sum;
}

/* Fills x with this rank's contribution (garbage on HIERARCHICAL's non-senders, which only receive). */
static void fill(xffl_state_t *st, float *x, size_t count, int b, int garbage_if_receiver) {
  const int facility = get(st, XFFL_ATTR_FEDERATED_RANK);
  int is_sender = 1;
  (void)xffl_get_int(st, XFFL_ATTR_IS_SENDER, &is_sender);
  for (size_t i = 0; i < count; ++i)
    x[i] = garbage_if_receiver && !is_sender ? -12345.0f : facility_value(facility, i, b);
}

/* The values one WAN hop quantised, for the bound: facility f's contribution at position p of the
 * hop (the buffer itself, or a bucket of average_many's small buffers laid end to end). */
typedef struct {
  size_t count;           /* values in the hop */
  const size_t *offsets;  /* where each buffer starts in the hop; NULL: one buffer */
  const size_t *counts;
  int buffers;
} hop_t;

static float hop_value(const hop_t *hop, int f, size_t p, int b) {
  if (!hop || !hop->offsets) return facility_value(f, p, b);
  for (int k = 0; k < hop->buffers; ++k)
    if (p >= hop->offsets[k] && p < hop->offsets[k] + hop->counts[k]) return facility_value(f, p - hop->offsets[k], k);
  return 0.0f;
}

/* |x[i] - weighted f64 mean| within the format's bound, for every i of buffer b, which sits at `offset`
 * in its hop (NULL: the hop is the buffer). Returns the largest error. */
static double check_bound_in(xffl_state_t *st, const float *x, size_t count, int b, const hop_t *hop, size_t offset,
                             const format_bound_t *fmt, const double *weights, double rounds, const char *what) {
  const int facilities = get(st, XFFL_ATTR_FEDERATED_WORLD_SIZE);
  const size_t hop_count = hop ? hop->count : count;
  double worst = 0, block_max[64] = {0};
  size_t cached_block = (size_t)-1;
  for (size_t i = 0; i < count; ++i) {
    const size_t p = offset + i;
    if (fmt && fmt->block && p / fmt->block != cached_block) { /* each facility's largest |x| of p's block */
      cached_block = p / fmt->block;
      const size_t first = cached_block * fmt->block;
      const size_t last = first + fmt->block < hop_count ? first + fmt->block : hop_count;
      for (int f = 0; f < facilities && f < 64; ++f) {
        block_max[f] = 0;
        for (size_t q = first; q < last; ++q)
          if (fabs(hop_value(hop, f, q, b)) > block_max[f]) block_max[f] = fabs(hop_value(hop, f, q, b));
      }
    }
    double mean = 0, bound = 0, largest = 0;
    for (int f = 0; f < facilities; ++f) {
      const double a = factor(weights, facilities, f);
      mean += a * facility_value(f, i, b) / facilities;
      double reference = fabs(a * facility_value(f, i, b));
      if (fmt && fmt->block) reference = fabs(a) * block_max[f];
      if (reference > largest) largest = reference;
      bound += (fmt ? fmt->relative : 0) * reference / facilities;
    }
    /* f32 rounding of the scaling, the sum and the division; f16's subnormal range (absolute 2^-25). */
    bound = bound * (1 + 1e-5) + 8 * facilities * FLT_EPSILON * largest + 6e-8;
    /* With error feedback the sum of the rounds is off by the last residual (one round's bound) and
     * the f32 roundings of each round. */
    if (rounds > 1) bound = 2 * bound + rounds * 8 * facilities * FLT_EPSILON * largest;
    const double error = fabs((double)x[i] - rounds * mean);
    if (error > bound) {
      fprintf(stderr, "rank %d: %s: index %zu is %.9g, the f64 mean is %.9g: error %.3g above the bound %.3g\n", rank,
              what, i, (double)x[i], rounds * mean, error, bound);
      exit(1);
    }
    if (error > worst) worst = error;
  }
  ++checks;
  return worst;
}

static double check_bound(xffl_state_t *st, const float *x, size_t count, int b, const format_bound_t *fmt,
                          const double *weights, double rounds, const char *what) {
  return check_bound_in(st, x, count, b, NULL, 0, fmt, weights, rounds, what);
}

static void one_average(xffl_state_t *st, size_t count, const format_bound_t *fmt, const double *weights,
                        int garbage, const char *strategy) {
  float *x = malloc(sizeof(float) * (count ? count : 1));
  fill(st, x, count, 0, garbage);
  CHECK(xffl_federated_average(st, x, count, XFFL_F32, NULL));
  char what[160];
  snprintf(what, sizeof what, "%s %s%s average of %zu f32", strategy, fmt ? fmt->name : "f32",
           weights ? " weighted" : "", count);
  check_identical(st, x, count * sizeof(float), what);
  check_bound(st, x, count, 0, fmt, weights, 1, what);
  free(x);
}

static void many_average(xffl_state_t *st, const format_bound_t *fmt, int garbage, const char *strategy) {
  /* Buckets of small buffers, an empty one, and (int8_block only, to keep the test short) one larger
   * than a bucket (16 MiB) that goes alone. */
  const size_t large = fmt->format == XFFL_WIRE_INT8_BLOCK ? (4u << 20) + 5 : 4099;
  const size_t counts[] = {3, 0, 1000, 77, large, 12};
  enum { N = sizeof counts / sizeof counts[0] };
  float *bufs[N];
  for (int b = 0; b < N; ++b) {
    bufs[b] = malloc(sizeof(float) * (counts[b] ? counts[b] : 1));
    fill(st, bufs[b], counts[b], b, garbage);
  }
  CHECK(xffl_federated_average_many(st, (void *const *)bufs, counts, N, XFFL_F32, NULL));
  /* The small buffers share one bucket, laid end to end (blocks may span two buffers); the large one
   * is a hop of its own. */
  const size_t bucket_limit = (size_t)16 << 20;
  size_t offsets[N], bucket_counts[N], filled = 0;
  for (int b = 0; b < N; ++b) {
    const int small = counts[b] * sizeof(float) < bucket_limit;
    offsets[b] = small ? filled : 0;
    bucket_counts[b] = small ? counts[b] : 0;
    filled += bucket_counts[b];
  }
  const hop_t bucket = {filled, offsets, bucket_counts, N};
  for (int b = 0; b < N; ++b) {
    char what[160];
    snprintf(what, sizeof what, "%s %s average_many buffer %d of %zu", strategy, fmt->name, b, counts[b]);
    check_identical(st, bufs[b], counts[b] * sizeof(float), what);
    const hop_t alone = {counts[b], NULL, NULL, 0};
    check_bound_in(st, bufs[b], counts[b], b, bucket_counts[b] ? &bucket : &alone, offsets[b], fmt, NULL, 1, what);
    free(bufs[b]);
  }
}

/* Integers travel exact whatever the format: the same bytes as with F32. */
static void integers_exact(xffl_state_t *st, const format_bound_t *fmt) {
  const int facility = get(st, XFFL_ATTR_FEDERATED_RANK);
  const size_t count = 1001;
  int32_t *a = malloc(sizeof(int32_t) * count), *b = malloc(sizeof(int32_t) * count);
  for (size_t i = 0; i < count; ++i) a[i] = b[i] = (int32_t)((facility + 1) * (int)(i % 13));
  CHECK(xffl_federated_average(st, a, count, XFFL_I32, NULL));
  CHECK(xffl_set_option(st, XFFL_OPT_WIRE_FORMAT, XFFL_WIRE_F32));
  CHECK(xffl_federated_average(st, b, count, XFFL_I32, NULL));
  CHECK(xffl_set_option(st, XFFL_OPT_WIRE_FORMAT, fmt->format));
  if (memcmp(a, b, sizeof(int32_t) * count) != 0) {
    fprintf(stderr, "rank %d: i32 average with wire format %s differs from F32's\n", rank, fmt->name);
    exit(1);
  }
  free(a);
  free(b);
  ++checks;
}

/* 50 rounds of the same contributions: the sum of the means against 50 x the f64 mean. */
static double rounds_error(xffl_state_t *st, const format_bound_t *fmt, int feedback, int garbage,
                           const char *strategy) {
  const size_t count = 1001;
  const int rounds = 50;
  CHECK(xffl_set_option(st, XFFL_OPT_ERROR_FEEDBACK, feedback));
  float *x = malloc(sizeof(float) * count), *sum = calloc(count, sizeof(float));
  double *total = calloc(count, sizeof(double));
  for (int r = 0; r < rounds; ++r) {
    fill(st, x, count, 0, garbage);  /* the same buffer every round: its residual carries over */
    CHECK(xffl_federated_average(st, x, count, XFFL_F32, NULL));
    check_identical(st, x, count * sizeof(float), "a round's mean");
    for (size_t i = 0; i < count; ++i) total[i] += x[i];
  }
  for (size_t i = 0; i < count; ++i) sum[i] = (float)total[i];
  double worst = 0;
  if (feedback) {
    char what[160];
    snprintf(what, sizeof what, "%s %s with error feedback, sum of %d rounds", strategy, fmt->name, rounds);
    worst = check_bound(st, sum, count, 0, fmt, NULL, rounds, what);
  } else {
    const int facilities = get(st, XFFL_ATTR_FEDERATED_WORLD_SIZE);
    for (size_t i = 0; i < count; ++i) {
      double mean = 0;
      for (int f = 0; f < facilities; ++f) mean += facility_value(f, i, 0) / facilities;
      if (fabs(total[i] - rounds * mean) > worst) worst = fabs(total[i] - rounds * mean);
    }
  }
  CHECK(xffl_set_option(st, XFFL_OPT_ERROR_FEEDBACK, 0));
  free(x);
  free(sum);
  free(total);
  return worst;
}

static void every_format(xffl_state_t *st, int garbage, const char *strategy) {
  const int facilities = get(st, XFFL_ATTR_FEDERATED_WORLD_SIZE);
  double weights[16];
  for (int f = 0; f < facilities && f < 16; ++f) weights[f] = 1.0 + f;
  for (size_t k = 0; k < sizeof kFormats / sizeof kFormats[0]; ++k) {
    const format_bound_t *fmt = &kFormats[k];
    CHECK(xffl_set_option(st, XFFL_OPT_WIRE_FORMAT, fmt->format));
    int got = -1;
    CHECK(xffl_get_option(st, XFFL_OPT_WIRE_FORMAT, &got));
    if (got != (int)fmt->format) {
      fprintf(stderr, "rank %d: XFFL_OPT_WIRE_FORMAT reads %d after setting %d\n", rank, got, (int)fmt->format);
      exit(1);
    }
    const size_t counts[] = {0, 1, 1001, 300007};
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; ++c) one_average(st, counts[c], fmt, NULL, garbage, strategy);
    CHECK(xffl_set_federated_weights(st, weights, (size_t)facilities));
    one_average(st, 1001, fmt, weights, garbage, strategy);
    CHECK(xffl_set_federated_weights(st, NULL, 0));
    integers_exact(st, fmt);
    const double with = rounds_error(st, fmt, 1, garbage, strategy);
    const double without = rounds_error(st, fmt, 0, garbage, strategy);
    if (rank == 0)
      printf("rank 0: %s %s: error of the sum of 50 rounds: %.3g with error feedback, %.3g without\n", strategy,
             fmt->name, with, without);
  }
  for (size_t k = 0; k < sizeof kFormats / sizeof kFormats[0]; ++k) {
    CHECK(xffl_set_option(st, XFFL_OPT_WIRE_FORMAT, kFormats[k].format));
    many_average(st, &kFormats[k], garbage, strategy);
  }
  CHECK(xffl_set_option(st, XFFL_OPT_WIRE_FORMAT, XFFL_WIRE_F32));
}

int main(void) {
  xffl_state_t *st = NULL;
  const char *rank_env = getenv("RANK");
  rank = rank_env ? atoi(rank_env) : -1;
  CHECK(xffl_state_from_env(&st));
  const int facilities = get(st, XFFL_ATTR_FEDERATED_WORLD_SIZE);

  /* F32 stays exact: small integers, and a power-of-two G makes the mean exact. */
  if ((facilities & (facilities - 1)) == 0) {
    const size_t count = 1001;
    const int facility = get(st, XFFL_ATTR_FEDERATED_RANK);
    float *x = malloc(sizeof(float) * count);
    for (size_t i = 0; i < count; ++i) x[i] = (float)((facility + 1) * (int)(i % 13));
    CHECK(xffl_federated_average(st, x, count, XFFL_F32, NULL));
    for (size_t i = 0; i < count; ++i)
      if (x[i] != (float)((double)(facilities + 1) / 2 * (double)(i % 13))) {
        fprintf(stderr, "rank %d: F32 mean at %zu is %g\n", rank, i, (double)x[i]);
        exit(1);
      }
    free(x);
    ++checks;
  }
  /* The default is exact (no bound); bad values are refused naming them. */
  one_average(st, 1001, NULL, NULL, 1, "hierarchical");
  if (xffl_set_option(st, XFFL_OPT_WIRE_FORMAT, 5) != XFFL_EINVAL ||
      !strstr(xffl_last_error_message(), "wire format 5") ||
      xffl_set_option(st, XFFL_OPT_ERROR_FEEDBACK, 2) != XFFL_EINVAL) {
    fprintf(stderr, "rank %d: bad wire options were not refused as expected: %s\n", rank, xffl_last_error_message());
    exit(1);
  }
  ++checks;

  every_format(st, 1, "hierarchical");

  size_t n_sizes = 0;
  int sizes[64];
  CHECK(xffl_get_ints(st, XFFL_ATTR_FEDERATED_LOCAL_SIZE, sizes, 64, &n_sizes));
  int equal = 1;
  for (size_t i = 1; i < n_sizes; ++i) equal = equal && sizes[i] == sizes[0];
  if (equal) {
    CHECK(xffl_set_option(st, XFFL_OPT_FEDERATED_STRATEGY, XFFL_FEDAVG_FLAT));
    every_format(st, 0, "flat");
  }
  /* Ranks that disagree on the format: UCX's call-signature check fails the average on every rank
   * with XFFL_EINVAL (the all-gathers' lengths differ) instead of a hang or a wrong mean. Only where
   * every rank crosses (a receiver would wait for its sender's relay until the timeout). Last: the
   * state is destroyed afterwards. */
  if (get(st, XFFL_ATTR_WORLD_SIZE) == facilities) {
    CHECK(xffl_set_option(st, XFFL_OPT_WIRE_FORMAT, rank == 0 ? XFFL_WIRE_INT8_BLOCK : XFFL_WIRE_BF16));
    float x[1000];
    fill(st, x, 1000, 0, 0);
    const xffl_status_t rc = xffl_federated_average(st, x, 1000, XFFL_F32, NULL);
    if (rc != XFFL_EINVAL) {
      fprintf(stderr, "rank %d: mismatched wire formats gave %s, not XFFL_EINVAL: %s\n", rank, xffl_status_string(rc),
              xffl_last_error_message());
      exit(1);
    }
    ++checks;
  }
  printf("rank %d: %ld checks passed\n", rank, checks);
  xffl_state_destroy(st);
  return 0;
}
