/*
 * Run under xffl-run with federated scaling: the nonblocking averages (xffl/request.h) through the C API.
 * - xffl_federated_average_start with compute on the calling thread (polling xffl_request_test between
 *   steps) leaves exactly the bytes of xffl_federated_average on the same input: HIERARCHICAL (with the
 *   layout's HSDP relay), weighted, FLAT where the layout allows it, and _many_start against _many. The
 *   inputs are not exact in f32, so any other order of additions shows as other bits.
 * - While a request is in flight: the getters answer, every other call (a collective, another start,
 *   the blocking average, a setter) gets XFFL_ESTATE naming the request's call; after the wait, the
 *   state takes them again, and test answers done with the same status.
 * - xffl_request_free on a request still in flight waits for it: the buffer then holds the average.
 * - xffl_state_destroy with a request in flight waits for its run; the request still answers wait.
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

#define EXPECT(condition, ...)                                                                     \
  do {                                                                                             \
    if (!(condition)) {                                                                            \
      fprintf(stderr, "rank %d: ", rank);                                                          \
      fprintf(stderr, __VA_ARGS__);                                                                \
      fprintf(stderr, "\n");                                                                       \
      exit(1);                                                                                     \
    }                                                                                              \
    ++checks;                                                                                      \
  } while (0)

static int rank = -1;
static long checks = 0;

/* A buffer of 4 MiB: over the 1 MiB from which one host's allreduce goes in pipelined rounds (several
 * of them), and the pipelined ring across hosts. (It was 12 MiB: three times the time, most of this
 * test's under ThreadSanitizer, for no other path.) */
#define LARGE ((size_t)1 << 20)

static int get(const xffl_state_t *st, xffl_attr_t attr) {
  int value = 0;
  CHECK(xffl_get_int(st, attr, &value));
  return value;
}

/* Values whose sums round in f32: a different order of additions gives different bits. */
static void fill(float *x, size_t count, int seed) {
  uint32_t h = 2166136261u ^ (uint32_t)seed * 16777619u;
  for (size_t i = 0; i < count; ++i) {
    h = h * 1664525u + 1013904223u;
    x[i] = (float)((int32_t)(h >> 8) - (1 << 23)) / 7919.0f;
  }
}

/* The training step overlapped with the average: arithmetic on memory of its own. */
static double compute_step(float *work, size_t count) {
  double sum = 0;
  for (size_t i = 0; i < count; ++i) {
    work[i] = work[i] * 0.999f + 0.5f;
    sum += work[i];
  }
  return sum;
}

/* Computes until the request is done, testing between steps; then waits (a no-op once done). */
static void compute_while_in_flight(xffl_request_t *req) {
  enum { WORK = 1 << 16 };
  static float work[WORK];
  int done = 0;
  double sink = 0;
  while (!done) {
    sink += compute_step(work, WORK);
    CHECK(xffl_request_test(req, &done));
  }
  CHECK(xffl_request_wait(req));
  if (sink == 42.0) printf("rank %d: (unlikely sum)\n", rank); /* keeps the compute from being dropped */
}

/* One buffer: blocking on a copy, nonblocking on another, same input; the bits must agree. */
static void compare_one(xffl_state_t *st, size_t count, const char *what) {
  const int facility = get(st, XFFL_ATTR_FEDERATED_RANK);
  float *blocking = malloc(sizeof(float) * (count ? count : 1));
  float *nonblocking = malloc(sizeof(float) * (count ? count : 1));
  fill(blocking, count, 1000 * facility + rank); /* replicas differ too: the relay must overwrite them */
  memcpy(nonblocking, blocking, sizeof(float) * count);
  CHECK(xffl_federated_average(st, blocking, count, XFFL_F32, NULL));
  xffl_request_t *req = NULL;
  CHECK(xffl_federated_average_start(st, nonblocking, count, XFFL_F32, NULL, &req));
  compute_while_in_flight(req);
  xffl_request_free(req);
  EXPECT(memcmp(blocking, nonblocking, sizeof(float) * count) == 0,
         "%s of %zu f32: the nonblocking average differs from the blocking one", what, count);
  free(blocking);
  free(nonblocking);
}

static void compare_many(xffl_state_t *st) {
  const int facility = get(st, XFFL_ATTR_FEDERATED_RANK);
  const size_t counts[] = {3, 0, 1000, 77, (size_t)5 << 20, 12};
  enum { N = sizeof counts / sizeof counts[0] };
  float *blocking[N], *nonblocking[N];
  for (int b = 0; b < N; ++b) {
    blocking[b] = malloc(sizeof(float) * (counts[b] ? counts[b] : 1));
    nonblocking[b] = malloc(sizeof(float) * (counts[b] ? counts[b] : 1));
    fill(blocking[b], counts[b], 1000 * facility + 10 * rank + b);
    memcpy(nonblocking[b], blocking[b], sizeof(float) * counts[b]);
  }
  CHECK(xffl_federated_average_many(st, (void *const *)blocking, counts, N, XFFL_F32, NULL));
  xffl_request_t *req = NULL;
  {
    /* The arrays are copied by the start: these go before the request is done. */
    void **bufs = malloc(sizeof(void *) * N);
    size_t *sizes = malloc(sizeof(size_t) * N);
    for (int b = 0; b < N; ++b) {
      bufs[b] = nonblocking[b];
      sizes[b] = counts[b];
    }
    CHECK(xffl_federated_average_many_start(st, bufs, sizes, N, XFFL_F32, NULL, &req));
    memset(bufs, 0, sizeof(void *) * N);
    memset(sizes, 0xff, sizeof(size_t) * N);
    free(bufs);
    free(sizes);
  }
  compute_while_in_flight(req);
  xffl_request_free(req);
  for (int b = 0; b < N; ++b) {
    EXPECT(memcmp(blocking[b], nonblocking[b], sizeof(float) * counts[b]) == 0,
           "many: buffer %d of %zu f32: the nonblocking average differs from the blocking one", b, counts[b]);
    free(blocking[b]);
    free(nonblocking[b]);
  }
}

static void expect_refused(xffl_status_t rc, const char *call, const char *request_call) {
  EXPECT(rc == XFFL_ESTATE, "%s during a request returned %s, expected XFFL_ESTATE", call, xffl_status_string(rc));
  EXPECT(strstr(xffl_last_error_message(), request_call) != NULL && strstr(xffl_last_error_message(), call) != NULL,
         "%s during a request: the message names neither the call nor %s: %s", call, request_call,
         xffl_last_error_message());
}

/* What the state answers while a request is in flight, and after. */
static void calls_in_flight(xffl_state_t *st) {
  const size_t count = (size_t)1 << 20;
  float *x = malloc(sizeof(float) * count), *y = malloc(sizeof(float) * count);
  fill(x, count, rank);
  fill(y, count, rank + 7);
  xffl_request_t *req = NULL;
  CHECK(xffl_federated_average_start(st, x, count, XFFL_F32, NULL, &req));

  /* Getters answer. */
  int value = -1;
  CHECK(xffl_get_int(st, XFFL_ATTR_RANK, &value));
  EXPECT(value == rank, "xffl_get_int(RANK) during a request gave %d", value);
  char text[8192];
  size_t len = 0;
  CHECK(xffl_state_describe(st, XFFL_FORMAT_JSON, text, sizeof text, &len));
  EXPECT(len > 0, "xffl_state_describe during a request gave nothing");
  xffl_group_t *world = NULL;
  CHECK(xffl_get_group(st, XFFL_GROUP_WORLD, 0, &world));
  int size = 0;
  CHECK(xffl_group_size(world, &size));
  EXPECT(size == get(st, XFFL_ATTR_WORLD_SIZE), "xffl_group_size during a request gave %d", size);
  CHECK(xffl_get_option(st, XFFL_OPT_TIMEOUT_MS, &value));

  /* Everything else is refused, naming the request's call, and changes nothing. */
  const char *start = "xffl_federated_average_start";
  expect_refused(xffl_barrier(world), "xffl_barrier", start);
  expect_refused(xffl_allreduce(world, y, y, 16, XFFL_F32, XFFL_SUM, NULL), "xffl_allreduce", start);
  expect_refused(xffl_federated_average(st, y, count, XFFL_F32, NULL), "xffl_federated_average", start);
  xffl_request_t *second = NULL;
  expect_refused(xffl_federated_average_start(st, y, count, XFFL_F32, NULL, &second),
                 "xffl_federated_average_start", start);
  EXPECT(second == NULL, "a refused start wrote its request");
  expect_refused(xffl_set_option(st, XFFL_OPT_TIMEOUT_MS, 1000), "xffl_set_option", start);
  expect_refused(xffl_unset_federated_scaling(st), "xffl_unset_federated_scaling", start);
  EXPECT(xffl_is_federated_scaling_setup(st) == 1, "the layout changed during a request");

  CHECK(xffl_request_wait(req));
  int done = 0;
  CHECK(xffl_request_test(req, &done));
  EXPECT(done == 1, "xffl_request_test after the wait says not done");
  CHECK(xffl_request_wait(req)); /* a done request answers again */
  xffl_request_free(req);
  CHECK(xffl_barrier(world)); /* the state takes every call again */

  /* Argument errors come from the start itself, and hold nothing. */
  EXPECT(xffl_federated_average_start(st, NULL, 5, XFFL_F32, NULL, &req) == XFFL_EINVAL,
         "start with a NULL buffer was not XFFL_EINVAL");
  EXPECT(xffl_federated_average_start(st, x, count, XFFL_F32, NULL, NULL) == XFFL_EINVAL,
         "start with a NULL req was not XFFL_EINVAL");
  EXPECT(xffl_request_wait(NULL) == XFFL_EINVAL, "xffl_request_wait(NULL) was not XFFL_EINVAL");
  EXPECT(xffl_request_test(NULL, &done) == XFFL_EINVAL, "xffl_request_test(NULL) was not XFFL_EINVAL");
  xffl_request_free(NULL);
  CHECK(xffl_barrier(world));
  free(x);
  free(y);
}

/* xffl_request_free on a request in flight waits for it: the buffer then holds the average. */
static void free_in_flight(xffl_state_t *st) {
  const size_t count = LARGE;
  const int facility = get(st, XFFL_ATTR_FEDERATED_RANK);
  float *blocking = malloc(sizeof(float) * count), *freed = malloc(sizeof(float) * count);
  fill(blocking, count, 31 * facility + rank);
  memcpy(freed, blocking, sizeof(float) * count);
  CHECK(xffl_federated_average(st, blocking, count, XFFL_F32, NULL));
  xffl_request_t *req = NULL;
  CHECK(xffl_federated_average_start(st, freed, count, XFFL_F32, NULL, &req));
  xffl_request_free(req);
  EXPECT(memcmp(blocking, freed, sizeof(float) * count) == 0, "free of a request in flight: the buffer differs from "
                                                                "the blocking average");
  xffl_group_t *world = NULL;
  CHECK(xffl_get_group(st, XFFL_GROUP_WORLD, 0, &world));
  CHECK(xffl_barrier(world));
  free(blocking);
  free(freed);
}

/* Ends the state with a request in flight: the destroy waits for its run; the request still answers. */
static void destroy_in_flight(xffl_state_t *st) {
  const size_t count = LARGE;
  const int facility = get(st, XFFL_ATTR_FEDERATED_RANK);
  float *blocking = malloc(sizeof(float) * count), *x = malloc(sizeof(float) * count);
  fill(blocking, count, 77 * facility + rank);
  memcpy(x, blocking, sizeof(float) * count);
  CHECK(xffl_federated_average(st, blocking, count, XFFL_F32, NULL));
  xffl_request_t *req = NULL;
  CHECK(xffl_federated_average_start(st, x, count, XFFL_F32, NULL, &req));
  xffl_state_destroy(st);
  CHECK(xffl_request_wait(req));
  int done = 0;
  CHECK(xffl_request_test(req, &done));
  EXPECT(done == 1, "a request whose state was destroyed is not done");
  xffl_request_free(req);
  EXPECT(memcmp(blocking, x, sizeof(float) * count) == 0, "destroy with a request in flight: the buffer differs "
                                                            "from the blocking average");
  free(blocking);
  free(x);
}

int main(void) {
  xffl_state_t *st = NULL;
  const char *rank_env = getenv("RANK");
  rank = rank_env ? atoi(rank_env) : -1;
  CHECK(xffl_state_from_env(&st));
  const int facilities = get(st, XFFL_ATTR_FEDERATED_WORLD_SIZE);

  /* HIERARCHICAL (the default): 1001 takes recursive doubling and a tree, LARGE the pipelined ring. */
  const size_t counts[] = {0, 1001, LARGE};
  for (size_t c = 0; c < sizeof counts / sizeof counts[0]; ++c) compare_one(st, counts[c], "hierarchical");
  compare_many(st);

  /* Weighted (FedAvg by sample count). */
  double weights[64];
  for (int f = 0; f < facilities && f < 64; ++f) weights[f] = 1.0 + 2.0 * f;
  CHECK(xffl_set_federated_weights(st, weights, (size_t)facilities));
  compare_one(st, LARGE, "weighted");
  CHECK(xffl_set_federated_weights(st, NULL, 0));

  calls_in_flight(st);
  free_in_flight(st);

  size_t n_sizes = 0;
  int sizes[64];
  CHECK(xffl_get_ints(st, XFFL_ATTR_FEDERATED_LOCAL_SIZE, sizes, 64, &n_sizes));
  int equal = 1;
  for (size_t i = 1; i < n_sizes; ++i) equal = equal && sizes[i] == sizes[0];
  if (equal) {
    CHECK(xffl_set_option(st, XFFL_OPT_FEDERATED_STRATEGY, XFFL_FEDAVG_FLAT));
    compare_one(st, 1001, "flat");
    compare_one(st, LARGE, "flat");
    compare_many(st);
  }
  destroy_in_flight(st);
  printf("rank %d: %ld checks passed\n", rank, checks);
  return 0;
}
