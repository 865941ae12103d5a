/*
 * One program for a facility's job (XFFL_FACILITY, XFFL_FEDERATION) and for the single-world job it is
 * compared with (tests/facilities/run_facilities.py runs both under xffl-run and compares their lines).
 *
 *   check_facility results   prints this rank's plan, its groups' members and a hash of every
 *                            federated average (HIERARCHICAL and, where valid, FLAT; plain and weighted;
 *                            _many; int8_block): "rank R: <what> <value>" lines, R the global rank.
 *                            Also checks what facility mode refuses (a process group spanning facilities,
 *                            other federated sizes, FSDP over the whole world) and what it allows (a
 *                            process group inside it).
 *   check_facility loop N    averages N rounds (0: until an error), printing "rank R: round K" every 10;
 *                            on an error prints "rank R: average failed: STATUS: message", exits 3.
 *   check_facility continue COUNT PACE_MS [weighted|many]
 *                            XFFL_FACILITY_FAULTS=continue (tests/facilities/run_continue.py): averages
 *                            COUNT values and a stop flag per round until a result carries the flag (set
 *                            by every facility whose ranks see the file $XFFL_TEST_STOP_FILE), sleeping
 *                            PACE_MS between rounds. Each round prints "rank R: continue round K shard S
 *                            epoch E live L hash H check C seconds T": K, E, L the federation's round, epoch
 *                            and live facilities, H a hash of the result, C "ok" when the result is the
 *                            (weighted) mean of the live facilities' inputs of round K, else "mismatch", T
 *                            the seconds this rank spent in the average. The input of
 *                            round K depends on the facility, the shard and K only. "many" averages
 *                            the same values as three buffers (xffl_federated_average_many).
 *                            With a compressing XFFL_WIRE_FORMAT (the library reads it; XFFL_ERROR_FEEDBACK
 *                            too), C is "ok" when every value is within the format's bound of that mean
 *                            (bound() below); the hash still shows that every rank got the same bytes.
 *                            XFFL_TEST_AVERAGE_CALL=start averages with xffl_federated_average_start
 *                            (_many_start), reading the getters while it is in flight, then
 *                            xffl_request_wait. The line ends with "wire W feedback 0|1 call
 *                            blocking|start error E" (E the largest |result - mean|).
 *                            bench/facilities/continue_bench.py also runs it under fail. A failed average
 *                            prints "rank R: average failed: STATUS: message" and exits 0, unless
 *                            $XFFL_TEST_RETRIES (default 0) failures are still allowed: then the loop
 *                            goes on with its next average (a training loop that retries).
 *                            $XFFL_TEST_CHECK_STRIDE (default 1) checks every S-th value only (and the
 *                            bound's largest contribution over them): the benchmark's overhead part, so
 *                            that ranks done with a round do not burn the cores that the round's last
 *                            ranks still need (6 ranks on 2 cores); the hash still covers every value.
 *
 * Inputs depend on the facility, the shard and the index (not on the rank), with fractional values, so
 * the result of each shard is the same bytes on every rank that holds it only if every facility adds in
 * the same order. Exits 0 with "rank R: facility checks passed", or 1 naming the failed call.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <xffl.h>

static int rank = -1;

#define CHECK(call)                                                                                \
  do {                                                                                             \
    xffl_status_t check_rc_ = (call);                                                              \
    if (check_rc_ != XFFL_OK) {                                                                    \
      fprintf(stderr, "rank %d: %s failed: %s: %s\n", rank, #call, xffl_status_string(check_rc_),  \
              xffl_last_error_message());                                                          \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

static int get(const xffl_state_t *st, xffl_attr_t attr, int fallback) {
  int value = 0;
  return xffl_get_int(st, attr, &value) == XFFL_OK ? value : fallback;
}

static uint64_t fnv1a(const void *data, size_t bytes) {
  const unsigned char *p = data;
  uint64_t hash = 1469598103934665603ULL;
  for (size_t i = 0; i < bytes; ++i) hash = (hash ^ p[i]) * 1099511628211ULL;
  return hash;
}

static void print_group(xffl_state_t *st, xffl_group_kind_t kind, const char *name) {
  xffl_group_t *group = NULL;
  if (xffl_get_group(st, kind, 0, &group) != XFFL_OK) return;
  int ranks[4096];
  size_t len = 0;
  CHECK(xffl_group_ranks(group, ranks, 4096, &len));
  printf("rank %d: group %s ", rank, name);
  for (size_t i = 0; i < len; ++i) printf("%s%d", i ? "," : "", ranks[i]);
  printf("\n");
}

/* Facility f's value of shard p at index i. */
static float value(int facility, int shard, size_t i) {
  return (float)sin(0.37 * (double)(i + 1) + 1.3 * facility + 0.71 * shard) * (float)(facility + 1);
}

/* HIERARCHICAL reads only the senders' copies; FLAT every rank's. */
static int garbage_on_non_senders = 1;

static void fill(xffl_state_t *st, float *x, size_t count, size_t salt) {
  const int facility = get(st, XFFL_ATTR_FEDERATED_RANK, 0), shard = get(st, XFFL_ATTR_REPLICA_LOCAL_RANK, 0);
  for (size_t i = 0; i < count; ++i) x[i] = value(facility, shard, i + salt);
  if (garbage_on_non_senders && !get(st, XFFL_ATTR_IS_SENDER, 1))  /* the relay must overwrite it */
    for (size_t i = 0; i < count; ++i) x[i] = -12345.0f;
}

static void report(xffl_state_t *st, const char *what, const void *buf, size_t bytes) {
  printf("rank %d: result %s shard %d %016llx\n", rank, what, get(st, XFFL_ATTR_REPLICA_LOCAL_RANK, 0),
         (unsigned long long)fnv1a(buf, bytes));
}

static void average(xffl_state_t *st, const char *what, size_t count) {
  float *x = malloc(sizeof(float) * count);
  fill(st, x, count, 0);
  CHECK(xffl_federated_average(st, x, count, XFFL_F32, NULL));
  report(st, what, x, sizeof(float) * count);
  free(x);
}

static void average_many(xffl_state_t *st, const char *what) {
  const size_t counts[] = {3, 0, 1000, 77, 40000, 12};
  enum { N = sizeof counts / sizeof counts[0] };
  float *bufs[N];
  for (int b = 0; b < N; ++b) {
    bufs[b] = malloc(sizeof(float) * (counts[b] ? counts[b] : 1));
    fill(st, bufs[b], counts[b], (size_t)b * 7);
  }
  CHECK(xffl_federated_average_many(st, (void *const *)bufs, counts, N, XFFL_F32, NULL));
  uint64_t hash = 0;
  for (int b = 0; b < N; ++b) {
    hash = hash * 31 + fnv1a(bufs[b], counts[b] * sizeof(float));
    free(bufs[b]);
  }
  report(st, what, &hash, sizeof hash);
}

static int results(xffl_state_t *st) {
  const int world = get(st, XFFL_ATTR_WORLD_SIZE, 0), facilities = get(st, XFFL_ATTR_FEDERATED_WORLD_SIZE, 0);
  char json[1 << 16];
  size_t len = 0;
  CHECK(xffl_state_describe(st, XFFL_FORMAT_JSON, json, sizeof json, &len));
  printf("rank %d: describe %s\n", rank, json);
  print_group(st, XFFL_GROUP_WORLD, "world");
  print_group(st, XFFL_GROUP_FEDERATED, "federated");
  print_group(st, XFFL_GROUP_REPLICA, "replica");
  print_group(st, XFFL_GROUP_FEDERATION, "federation");
  print_group(st, XFFL_GROUP_HSDP_SHARD, "hsdp_shard");
  print_group(st, XFFL_GROUP_HSDP_REPLICA, "hsdp_replica");
  print_group(st, XFFL_GROUP_FSDP, "fsdp");

  average(st, "hierarchical", 5000);
  average(st, "hierarchical_small", 3);
  double weights[64];
  for (int g = 0; g < facilities && g < 64; ++g) weights[g] = 1.0 + 2.0 * g;
  CHECK(xffl_set_federated_weights(st, weights, (size_t)facilities));
  average(st, "hierarchical_weighted", 5000);
  average_many(st, "hierarchical_many_weighted");
  CHECK(xffl_set_federated_weights(st, NULL, 0));
  average_many(st, "hierarchical_many");
  CHECK(xffl_set_option(st, XFFL_OPT_WIRE_FORMAT, XFFL_WIRE_INT8_BLOCK));
  average(st, "hierarchical_int8_block", 5000);
  CHECK(xffl_set_option(st, XFFL_OPT_WIRE_FORMAT, XFFL_WIRE_F32));
  /* FLAT needs equal federated groups (every rank crosses). */
  if (xffl_set_option(st, XFFL_OPT_FEDERATED_STRATEGY, XFFL_FEDAVG_FLAT) == XFFL_OK) {
    float probe = 0;
    if (xffl_federated_average(st, &probe, 1, XFFL_F32, NULL) == XFFL_OK) {
      garbage_on_non_senders = 0;
      average(st, "flat", 5000);
      CHECK(xffl_set_federated_weights(st, weights, (size_t)facilities));
      average(st, "flat_weighted", 5000);
      CHECK(xffl_set_federated_weights(st, NULL, 0));
      garbage_on_non_senders = 1;
    }
    CHECK(xffl_set_option(st, XFFL_OPT_FEDERATED_STRATEGY, XFFL_FEDAVG_HIERARCHICAL));
  }

  /* A process group of this rank and its FEDERATION's first rank lies inside one facility (and one
   * job); it works in both modes. */
  xffl_group_t *federation = NULL;
  CHECK(xffl_get_group(st, XFFL_GROUP_FEDERATION, 0, &federation));
  int members[4096];
  size_t n = 0;
  CHECK(xffl_group_ranks(federation, members, 4096, &n));
  xffl_group_t *inside = NULL;
  CHECK(xffl_create_process_group(st, members, n, "whole facility", &inside));
  double one = 1.0, sum = 0;
  CHECK(xffl_allreduce(inside, &one, &sum, 1, XFFL_F64, XFFL_SUM, NULL));
  if (sum != (double)n) {
    fprintf(stderr, "rank %d: allreduce over the facility's process group gave %g, not %zu\n", rank, sum, n);
    return 1;
  }
  xffl_group_destroy(inside);

  if (getenv("XFFL_FACILITY")) {
    /* Facility mode refuses a process group with a rank of another facility, before any wait. */
    int across[2] = {rank, members[0] == 0 ? world - 1 : 0};
    xffl_group_t *spanning = NULL;
    xffl_status_t rc = xffl_create_process_group(st, across, 2, "spanning", &spanning);
    printf("rank %d: spanning group %s: %s\n", rank, xffl_status_string(rc), xffl_last_error_message());
    if (rc != XFFL_EUNSUPPORTED) return 1;
    /* Federated sizes other than XFFL_FEDERATED's are refused, naming both. */
    CHECK(xffl_unset_federated_scaling(st));
    int other[1] = {world};
    rc = xffl_federated_scaling(st, other, 1, 0);
    printf("rank %d: other sizes %s: %s\n", rank, xffl_status_string(rc), xffl_last_error_message());
    if (rc != XFFL_EINVAL) return 1;
    /* Layouts whose groups span the federation's world (FSDP or HSDP over every rank) are refused. */
    rc = xffl_set_fsdp(st);
    printf("rank %d: world fsdp %s: %s\n", rank, xffl_status_string(rc), xffl_last_error_message());
    if (rc != XFFL_EUNSUPPORTED) return 1;
  }
  return 0;
}

static int loop(xffl_state_t *st, long rounds) {
  float x[256];
  for (long k = 1; rounds == 0 || k <= rounds; ++k) {
    fill(st, x, 256, 0);
    xffl_status_t rc = xffl_federated_average(st, x, 256, XFFL_F32, NULL);
    if (rc != XFFL_OK) {
      printf("rank %d: average failed: %s: %s\n", rank, xffl_status_string(rc), xffl_last_error_message());
      fflush(stdout);
      return 3;
    }
    if (k % 10 == 0) {
      printf("rank %d: round %ld\n", rank, k);
      fflush(stdout);
    }
  }
  return 0;
}

/* Facility f's input of shard p, round k, at index i. */
static double round_input(int facility, int shard, long k, size_t i) { return value(facility, shard, i + (size_t)k); }

/* Each wire format's bound of |decoded - x| for one contribution (xffl/types.h): relative to |x|, or to
 * the largest |x| of x's block; both are at most `relative` x the largest |x| of the whole contribution. */
static double format_relative(int format) {
  switch (format) {
    case XFFL_WIRE_BF16: return 1.0 / 256;
    case XFFL_WIRE_F16: return 1.0 / 2048;
    case XFFL_WIRE_INT8_BLOCK: return 1.0 / 254;
    case XFFL_WIRE_INT4_BLOCK: return 1.0 / 14;
    default: return 0;
  }
}
static const char *format_name(int format) {
  static const char *names[] = {"f32", "bf16", "f16", "int8_block", "int4_block"};
  return format >= 0 && format <= 4 ? names[format] : "unknown";
}

/* The bound of |result - weighted mean| over a round of `live` contributions, each quantised once: the
 * largest weighted contribution of the round is `largest`, of any round this process took part in
 * `largest_seen`. A contribution carries, with error feedback, the residual of its facility's last
 * hop (at most rel x what that hop meant to send: its contribution plus its own residual), so it is
 * off by its residual plus the format's error on contribution plus residual; the mean of such errors
 * is within the same bound. Plus the f32 rounding of the sum and division, and F16's subnormals. */
static double bound(int format, int feedback, size_t live, double largest, double largest_seen) {
  const double rel = format_relative(format);
  const double residual = feedback ? rel * largest_seen * (1 + 2 * rel) : 0;
  return rel * (largest + residual) + residual + 8.0 * (double)live * 1.2e-7 * (largest + residual) + 1e-7;
}

static int continue_loop(xffl_state_t *st, size_t count, long pace_ms, int weighted, int many) {
  const int facilities = get(st, XFFL_ATTR_FEDERATED_WORLD_SIZE, 0), facility = get(st, XFFL_ATTR_FEDERATED_RANK, 0);
  const int shard = get(st, XFFL_ATTR_REPLICA_LOCAL_RANK, 0), shards = get(st, XFFL_ATTR_HSDP, 1);
  double weights[64];
  for (int g = 0; g < facilities && g < 64; ++g) weights[g] = 1.0 + 2.0 * g;
  if (weighted) CHECK(xffl_set_federated_weights(st, weights, (size_t)facilities));
  xffl_group_t *federation = NULL;
  CHECK(xffl_get_group(st, XFFL_GROUP_FEDERATION, 0, &federation));
  const char *stop_file = getenv("XFFL_TEST_STOP_FILE");
  float *x = malloc(sizeof(float) * (count + 1));
  int format = XFFL_WIRE_F32, feedback = 0;
  CHECK(xffl_get_option(st, XFFL_OPT_WIRE_FORMAT, &format));
  CHECK(xffl_get_option(st, XFFL_OPT_ERROR_FEEDBACK, &feedback));
  const char *call = getenv("XFFL_TEST_AVERAGE_CALL");
  const int nonblocking = call && strcmp(call, "start") == 0;
  const char *retries_text = getenv("XFFL_TEST_RETRIES");
  int retries = retries_text ? atoi(retries_text) : 0;
  const char *stride_text = getenv("XFFL_TEST_CHECK_STRIDE");
  const size_t stride = stride_text && atol(stride_text) > 0 ? (size_t)atol(stride_text) : 1;
  double largest_seen = 0;
  for (;;) {
    int committed = get(st, XFFL_ATTR_FEDERATION_ROUND, -1);
    /* With several shards, every sender of the facility decides alike whether it asks to stop. With
     * one, its sender decides alone (the others' inputs are not read), and no call but the average
     * ties the sender to the other ranks: kill_relay relies on that. */
    float seen = (stop_file && access(stop_file, F_OK) == 0) ? 1.0f : 0.0f, stop = seen;
    if (shards > 1) CHECK(xffl_allreduce(federation, &seen, &stop, 1, XFFL_F32, XFFL_MAX, NULL));
    for (size_t i = 0; i < count; ++i) x[i] = (float)round_input(facility, shard, committed + 1, i);
    x[count] = stop;
    if (!get(st, XFFL_ATTR_IS_SENDER, 1))
      for (size_t i = 0; i <= count; ++i) x[i] = -12345.0f; /* the relay must overwrite it */
    xffl_status_t rc;
    struct timespec began, ended;
    clock_gettime(CLOCK_MONOTONIC, &began);
    size_t first = count / 3;
    void *bufs[3] = {x, x + first, x + count};
    const size_t counts[3] = {first, count - first, 1};
    if (nonblocking) {
      /* The getters answer while the request runs the round protocol on its own thread: the round
       * before this average, or this one once its run committed it, never less. */
      xffl_request_t *request = NULL;
      rc = many ? xffl_federated_average_many_start(st, bufs, counts, 3, XFFL_F32, NULL, &request)
                : xffl_federated_average_start(st, x, count + 1, XFFL_F32, NULL, &request);
      if (rc == XFFL_OK) {
        int done = 0;
        while (rc == XFFL_OK && !done) {
          const int seen_round = get(st, XFFL_ATTR_FEDERATION_ROUND, -1);
          int live_now[64];
          size_t n_now = 0;
          CHECK(xffl_get_ints(st, XFFL_ATTR_LIVE_FACILITIES, live_now, 64, &n_now));
          if (seen_round < committed) {
            printf("rank %d: XFFL_ATTR_FEDERATION_ROUND read %d during a request started after round %d\n", rank,
                   seen_round, committed);
            return 1;
          }
          rc = xffl_request_test(request, &done);
          if (rc == XFFL_OK && !done) usleep(500);
        }
        if (rc == XFFL_OK) rc = xffl_request_wait(request); /* done: returns its status at once */
        xffl_request_free(request);
      }
    } else if (many) { /* three buffers, packed by the library: the same bytes as one */
      rc = xffl_federated_average_many(st, bufs, counts, 3, XFFL_F32, NULL);
    } else {
      rc = xffl_federated_average(st, x, count + 1, XFFL_F32, NULL);
    }
    clock_gettime(CLOCK_MONOTONIC, &ended);
    if (rc != XFFL_OK) {
      /* Exit 0: the harness judges the line, and every rank of the job gets to print its own (xffl-run
       * would end the others at the first rank that fails). */
      printf("rank %d: average failed: %s: %s\n", rank, xffl_status_string(rc), xffl_last_error_message());
      fflush(stdout);
      if (retries-- > 0) continue;
      free(x);
      return 0;
    }
    committed = get(st, XFFL_ATTR_FEDERATION_ROUND, -1);
    const int epoch = get(st, XFFL_ATTR_FEDERATION_EPOCH, -1);
    int live[64];
    size_t n_live = 0;
    CHECK(xffl_get_ints(st, XFFL_ATTR_LIVE_FACILITIES, live, 64, &n_live));
    /* The expected mean over the live facilities' inputs of this round. */
    double total = 0;
    for (size_t l = 0; l < n_live; ++l) total += weighted ? weights[live[l]] : 1.0;
    /* The largest weighted contribution (n_live w_f / total x input) of the round. */
    double largest = 0;
    for (size_t l = 0; l < n_live; ++l)
      for (size_t i = 0; i < count; i += stride) {
        const double factor = weighted ? (double)n_live * weights[live[l]] / total : 1.0;
        const double contribution = fabs(factor * (float)round_input(live[l], shard, committed, i));
        if (contribution > largest) largest = contribution;
      }
    if (largest > largest_seen) largest_seen = largest;
    const double allowed = bound(format, feedback, n_live, largest, largest_seen);
    int ok = n_live > 0;
    double worst = 0;
    for (size_t i = 0; i < count; i += stride) {
      double expected = 0;
      for (size_t l = 0; l < n_live; ++l)
        expected += (weighted ? weights[live[l]] : 1.0) * (float)round_input(live[l], shard, committed, i);
      expected /= total;
      const double error = fabs(x[i] - expected);
      if (error > worst) worst = error;
      if (format_relative(format) == 0 ? error > 1e-5 * (1.0 + fabs(expected)) : !(error <= allowed)) ok = 0;
    }
    char live_text[512] = "";
    for (size_t l = 0; l < n_live; ++l)
      snprintf(live_text + strlen(live_text), sizeof live_text - strlen(live_text), "%s%d", l ? "," : "", live[l]);
    printf("rank %d: continue round %d shard %d epoch %d live %s hash %016llx check %s seconds %.6f wire %s "
           "feedback %d call %s error %.3g\n",
           rank, committed, shard, epoch, live_text, (unsigned long long)fnv1a(x, sizeof(float) * (count + 1)),
           ok ? "ok" : "mismatch",
           (double)(ended.tv_sec - began.tv_sec) + 1e-9 * (double)(ended.tv_nsec - began.tv_nsec),
           format_name(format), feedback, nonblocking ? "start" : "blocking", worst);
    fflush(stdout);
    if (x[count] > 0) break;
    if (pace_ms > 0) usleep((useconds_t)(pace_ms * 1000));
  }
  free(x);
  return 0;
}

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  const char *mode = argc > 1 ? argv[1] : "results";
  xffl_state_t *st = NULL;
  xffl_status_t rc = xffl_state_from_env(&st);
  if (rc != XFFL_OK) {
    printf("state failed: %s: %s\n", xffl_status_string(rc), xffl_last_error_message());
    return 1;
  }
  rank = get(st, XFFL_ATTR_RANK, -1);
  printf("rank %d: pid %d\n", rank, (int)getpid());
  int status = 0;
  if (strcmp(mode, "loop") == 0)
    status = loop(st, argc > 2 ? atol(argv[2]) : 0);
  else if (strcmp(mode, "continue") == 0)
    status = continue_loop(st, argc > 2 ? (size_t)atol(argv[2]) : 256, argc > 3 ? atol(argv[3]) : 20,
                           argc > 4 && strcmp(argv[4], "weighted") == 0, argc > 4 && strcmp(argv[4], "many") == 0);
  else
    status = results(st);
  xffl_state_destroy(st);
  if (status == 0) printf("rank %d: facility checks passed\n", rank);
  return status;
}
