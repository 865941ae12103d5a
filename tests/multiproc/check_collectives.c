/*
 * Run under xffl-run: every collective on every group of the layout the launcher describes, for every
 * dtype and op, in place and out of place, against values computed locally; and every member must end
 * with bit-identical bytes. Prints "rank R: N checks passed" and exits 0, or names the first failure.
 * --small: without the large count; --large: one count of 40 MiB and more on the world group alone.
 */
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
      fprintf(stderr, "rank %d: %s failed: %s: %s\n", my_rank, #call, xffl_status_string(check_rc_), \
              xffl_last_error_message());                                                          \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

static int my_rank = -1;
static long checks = 0;

static const xffl_dtype_t dtypes[] = {XFFL_F32, XFFL_F64, XFFL_F16, XFFL_BF16, XFFL_I8, XFFL_U8, XFFL_I32, XFFL_I64};
static const char *dtype_names[] = {"f32", "f64", "f16", "bf16", "i8", "u8", "i32", "i64"};
static const xffl_redop_t ops[] = {XFFL_SUM, XFFL_AVG, XFFL_MIN, XFFL_MAX, XFFL_PROD};
static const char *op_names[] = {"sum", "avg", "min", "max", "prod"};
/* How many of dtypes[] and ops[] run: all, or with --large the first two of each (f32 and f64, sum and
 * avg: the reduction in the type and divided). */
static size_t n_dtypes = sizeof dtypes / sizeof dtypes[0], n_ops = sizeof ops / sizeof ops[0];

static size_t dtype_size(xffl_dtype_t t) {
  switch (t) {
    case XFFL_F64: case XFFL_I64: return 8;
    case XFFL_F32: case XFFL_I32: return 4;
    case XFFL_F16: case XFFL_BF16: return 2;
    default: return 1;
  }
}

/* f16 / bf16 encodings of small integers and back (exact for the values used here). */
static uint16_t to_bf16(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return (uint16_t)(u >> 16);
}
static float from_bf16(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}
static uint16_t to_f16(float f) { /* only for values exactly representable: small integers and halves */
  if (f == 0) return 0;
  uint16_t sign = f < 0 ? 0x8000 : 0;
  float a = fabsf(f);
  int e = 0;
  while (a >= 2.0f) { a /= 2.0f; ++e; }
  while (a < 1.0f) { a *= 2.0f; --e; }
  return (uint16_t)(sign | (uint16_t)((e + 15) << 10) | (uint16_t)((a - 1.0f) * 1024.0f + 0.5f));
}
static float from_f16(uint16_t h) {
  int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  float v = e == 0 ? ldexpf((float)m, -24) : ldexpf(1.0f + (float)m / 1024.0f, e - 15);
  return (h & 0x8000) ? -v : v;
}

static void store(void *buf, size_t i, xffl_dtype_t t, double v) {
  switch (t) {
    case XFFL_F32: ((float *)buf)[i] = (float)v; break;
    case XFFL_F64: ((double *)buf)[i] = v; break;
    case XFFL_F16: ((uint16_t *)buf)[i] = to_f16((float)v); break;
    case XFFL_BF16: ((uint16_t *)buf)[i] = to_bf16((float)v); break;
    case XFFL_I8: ((int8_t *)buf)[i] = (int8_t)v; break;
    case XFFL_U8: ((uint8_t *)buf)[i] = (uint8_t)v; break;
    case XFFL_I32: ((int32_t *)buf)[i] = (int32_t)v; break;
    case XFFL_I64: ((int64_t *)buf)[i] = (int64_t)v; break;
  }
}

static double load(const void *buf, size_t i, xffl_dtype_t t) {
  switch (t) {
    case XFFL_F32: return ((const float *)buf)[i];
    case XFFL_F64: return ((const double *)buf)[i];
    case XFFL_F16: return from_f16(((const uint16_t *)buf)[i]);
    case XFFL_BF16: return from_bf16(((const uint16_t *)buf)[i]);
    case XFFL_I8: return ((const int8_t *)buf)[i];
    case XFFL_U8: return ((const uint8_t *)buf)[i];
    case XFFL_I32: return ((const int32_t *)buf)[i];
    case XFFL_I64: return (double)((const int64_t *)buf)[i];
  }
  return 0;
}

/* The value member `rank` contributes at index i: small, so every sum and product is exact in every dtype
 * (at most 12 members: sums stay below 48, products of 1s and 2s with at most 6 twos). */
static double value(int rank, size_t i, xffl_redop_t op, int members) {
  if (op == XFFL_PROD) return ((size_t)rank + i) % (size_t)(members > 6 ? members : 6) == 0 ? 2.0 : 1.0;
  return (double)(((size_t)rank * 7 + i * 3) % 4);
}

static double reference(const int *ranks, int n, size_t i, xffl_redop_t op, xffl_dtype_t t) {
  double acc = value(ranks[0], i, op, n);
  for (int k = 1; k < n; ++k) {
    double v = value(ranks[k], i, op, n);
    switch (op) {
      case XFFL_SUM: case XFFL_AVG: acc += v; break;
      case XFFL_MIN: acc = v < acc ? v : acc; break;
      case XFFL_MAX: acc = v > acc ? v : acc; break;
      case XFFL_PROD: acc *= v; break;
    }
  }
  if (op == XFFL_AVG) {
    int is_int = t == XFFL_I8 || t == XFFL_U8 || t == XFFL_I32 || t == XFFL_I64;
    acc = is_int ? trunc(acc / n) : acc / n;
  }
  return acc;
}

static int close_enough(double got, double want, xffl_dtype_t t) {
  double tolerance = t == XFFL_F16 || t == XFFL_BF16 ? 1e-2 : t == XFFL_F32 ? 1e-6 : t == XFFL_F64 ? 1e-12 : 0;
  return fabs(got - want) <= tolerance * (fabs(want) > 1 ? fabs(want) : 1);
}

static void failed(const char *what, const char *group, const char *dtype, const char *op, size_t count, size_t i,
                   double got, double want) {
  fprintf(stderr, "rank %d: %s on %s (%s, %s, count %zu) index %zu: got %g, expected %g\n", my_rank, what, group,
          dtype, op, count, i, got, want);
  exit(1);
}

static uint64_t fnv1a(const void *data, size_t bytes) {
  const unsigned char *p = data;
  uint64_t hash = 1469598103934665603ULL;
  for (size_t i = 0; i < bytes; ++i) hash = (hash ^ p[i]) * 1099511628211ULL;
  return hash;
}

/* Every member must hold the same bytes: gather everyone's checksum and compare. */
static void check_identical(xffl_group_t *g, int n, const void *buf, size_t bytes, const char *what) {
  int64_t mine = (int64_t)fnv1a(buf, bytes);
  int64_t *all = malloc(sizeof(int64_t) * (size_t)n);
  CHECK(xffl_allgather(g, &mine, all, 1, XFFL_I64, NULL));
  for (int k = 0; k < n; ++k)
    if (all[k] != mine) {
      fprintf(stderr, "rank %d: %s on %s: members hold different bytes\n", my_rank, what, xffl_group_description(g));
      exit(1);
    }
  free(all);
  ++checks;
}

static void check_group(xffl_group_t *g, const size_t *counts, size_t n_counts) {
  int n = 0, me = 0;
  size_t len = 0;
  CHECK(xffl_group_size(g, &n));
  CHECK(xffl_group_rank(g, &me));
  int *ranks = malloc(sizeof(int) * (size_t)n);
  CHECK(xffl_group_ranks(g, ranks, (size_t)n, &len));
  const char *name = xffl_group_description(g);
  for (size_t c = 0; c < n_counts; ++c) {
    const size_t count = counts[c];
    for (size_t d = 0; d < n_dtypes; ++d) {
      const xffl_dtype_t t = dtypes[d];
      const size_t bytes = count * dtype_size(t) + 1;
      unsigned char *send = malloc(bytes * (size_t)n), *recv = malloc(bytes * (size_t)n);
      for (size_t o = 0; o < n_ops; ++o) {
        const xffl_redop_t op = ops[o];
        for (int in_place = 0; in_place < 2; ++in_place) {
          for (size_t i = 0; i < count; ++i) store(send, i, t, value(ranks[me], i, op, n));
          unsigned char *out = in_place ? send : recv;
          CHECK(xffl_allreduce(g, send, out, count, t, op, NULL));
          for (size_t i = 0; i < count; ++i) {
            double want = reference(ranks, n, i, op, t), got = load(out, i, t);
            if (!close_enough(got, want, t))
              failed(in_place ? "allreduce (in place)" : "allreduce", name, dtype_names[d], op_names[o], count, i, got,
                     want);
          }
          check_identical(g, n, out, count * dtype_size(t), "allreduce");
          /* reduce_scatter: block `me` of the reduction of n blocks of `count` elements */
          for (size_t i = 0; i < count * (size_t)n; ++i) store(send, i, t, value(ranks[me], i, op, n));
          CHECK(xffl_reduce_scatter(g, send, in_place ? send : recv, count, t, op, NULL));
          for (size_t i = 0; i < count; ++i) {
            size_t global = (size_t)me * count + i;
            double want = reference(ranks, n, global, op, t), got = load(in_place ? send : recv, i, t);
            if (!close_enough(got, want, t))
              failed(in_place ? "reduce_scatter (in place)" : "reduce_scatter", name, dtype_names[d], op_names[o], count,
                     i, got, want);
          }
          checks += 2;
        }
      }
      /* allgather: member k contributes value(ranks[k], i) */
      for (size_t i = 0; i < count; ++i) store(send, i, t, value(ranks[me], i, XFFL_SUM, n));
      CHECK(xffl_allgather(g, send, recv, count, t, NULL));
      for (int k = 0; k < n; ++k)
        for (size_t i = 0; i < count; ++i) {
          double want = value(ranks[k], i, XFFL_SUM, n), got = load(recv, (size_t)k * count + i, t);
          if (got != want) failed("allgather", name, dtype_names[d], "-", count, (size_t)k * count + i, got, want);
        }
      /* broadcast from every member as root */
      for (int root = 0; root < n; ++root) {
        for (size_t i = 0; i < count; ++i) store(send, i, t, value(me == root ? ranks[root] : 999, i, XFFL_SUM, n));
        CHECK(xffl_broadcast(g, send, count, t, ranks[root], NULL));
        for (size_t i = 0; i < count; ++i) {
          double want = value(ranks[root], i, XFFL_SUM, n), got = load(send, i, t);
          if (got != want) failed("broadcast", name, dtype_names[d], "-", count, i, got, want);
        }
      }
      checks += 1 + n;
      free(send);
      free(recv);
    }
  }
  CHECK(xffl_barrier(g));
  free(ranks);
}

int main(int argc, char **argv) {
  xffl_state_t *st = NULL;
  const char *rank_env = getenv("RANK");
  my_rank = rank_env ? atoi(rank_env) : -1;
  CHECK(xffl_state_from_env(&st));
  /* Small counts exercise recursive doubling and the tree, the large one the pipelined ring and chain. */
  size_t counts[] = {0, 1, 7, 1000, 70001};
  size_t n_counts = argc > 1 && strcmp(argv[1], "--small") == 0 ? 4 : 5;
  if (argc > 1 && strcmp(argv[1], "--large") == 0) {
    /* Outputs of 40 MiB and more (f32: allreduce 40 MiB + 12 bytes, the others as much or more): on one
     * host the pipelined calls write them with streaming stores (host_stream_output_from in the
     * library's comm/algorithm_choice.h: from 40 MiB on 2 members, 20 MiB on more). The world group
     * only, f32 and f64, sum and avg. */
    const size_t large[] = {(40u << 20) / 4 + 3};
    n_dtypes = 2;
    n_ops = 2;
    xffl_group_t *world_group = NULL;
    CHECK(xffl_get_group(st, XFFL_GROUP_WORLD, 0, &world_group));
    check_group(world_group, large, 1);
    printf("rank %d: %ld checks passed\n", my_rank, checks);
    xffl_state_destroy(st);
    return 0;
  }
  const xffl_group_kind_t kinds[] = {XFFL_GROUP_WORLD, XFFL_GROUP_FSDP, XFFL_GROUP_HSDP_REPLICA, XFFL_GROUP_HSDP_SHARD,
                                     XFFL_GROUP_FEDERATED, XFFL_GROUP_REPLICA, XFFL_GROUP_FEDERATION};
  int streams = 1;
  CHECK(xffl_get_int(st, XFFL_ATTR_STREAMS, &streams));
  for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; ++k)
    for (int instance = 0; instance < streams; ++instance) {
      xffl_group_t *g = NULL;
      xffl_status_t rc = xffl_get_group(st, kinds[k], instance, &g);
      if (rc == XFFL_ENOTSET) break;
      if (rc == XFFL_EINVAL && instance > 0) break; /* one instance only for this kind */
      CHECK(rc);
      check_group(g, counts, n_counts);
    }
  /* A custom group of the even ranks, created by its members only. */
  int world = 1;
  CHECK(xffl_get_int(st, XFFL_ATTR_WORLD_SIZE, &world));
  if (my_rank % 2 == 0) {
    int evens[64], n = 0;
    for (int r = world - 1 - (world - 1) % 2; r >= 0 && n < 64; r -= 2) evens[n++] = r; /* descending order */
    xffl_group_t *g = NULL;
    CHECK(xffl_create_process_group(st, evens, (size_t)n, "even ranks, descending", &g));
    check_group(g, counts, n_counts);
    xffl_group_destroy(g);
  }
  printf("rank %d: %ld checks passed\n", my_rank, checks);
  xffl_state_destroy(st);
  return 0;
}
