/*
 * The xffl demo: federated training across simulated facilities.
 *
 * Run through the launcher, e.g. 8 processes as two unequal facilities of 2 and 6 ranks with HSDP 2:
 *   xffl-run -n 8 --federated 2,6 --hsdp 2 --backend ucx -- federated_sgd
 *
 * Each federated group (a facility) holds its own data, drawn from its own distribution. Inside a
 * facility the model (a linear regressor) is trained with HSDP: parameters are sharded over the
 * HSDP_SHARD group (forward gathers them with allgather, backward reduce-scatters the gradient) and
 * gradients are averaged over the HSDP_REPLICA group. Every K steps xffl_federated_average makes the
 * model the same in every facility. At the end every rank's shard is checksummed and rank 0 proves
 * that every copy of every shard is bit-identical.
 *
 * The facilities' averages may cross in a compressed wire format: XFFL_WIRE_FORMAT=int8_block (or bf16,
 * f16, int4_block) and XFFL_ERROR_FEEDBACK=1 in the environment (xffl_state_from_env reads them). Rank 0
 * prints the final loss of the averaged model over every facility's data, to compare formats.
 *
 * The same program runs as one job per facility (xffl-run --facility I --federation E, see
 * scripts/demo-facilities.sh). There the WORLD group is the facility's own job, so the proof covers
 * its ranks and the facilities' printed checksums are compared by whoever started them. With
 * XFFL_FACILITY_FAULTS=continue a facility may be lost and come back: the loop counts the
 * federation's rounds (XFFL_ATTR_FEDERATION_ROUND), so a facility that returns receives the current
 * model from its first average and resumes after that round, and every facility stops after the same
 * last round.
 *
 *   federated_sgd [--rounds N] [--round-ms MS]
 *     --rounds N     federated rounds (default 15; every facility must give the same N)
 *     --round-ms MS  each round lasts at least MS milliseconds, as a longer training step would
 *                    (default 0; the facilities demo paces its rounds so that a facility can be
 *                    killed and restarted while the others train)
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <xffl.h>

enum { FEATURES = 256, SAMPLES = 512, BATCH = 64, STEPS_PER_ROUND = 10, DEFAULT_ROUNDS = 15 };
static const float LEARNING_RATE = 0.05f;

#define CHECK(call)                                                                                \
  do {                                                                                             \
    xffl_status_t check_rc_ = (call);                                                              \
    if (check_rc_ != XFFL_OK) {                                                                    \
      fprintf(stderr, "federated_sgd: %s failed: %s: %s\n", #call, xffl_status_string(check_rc_),  \
              xffl_last_error_message());                                                          \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

static int get(const xffl_state_t *st, xffl_attr_t attr) {
  int value = 0;
  CHECK(xffl_get_int(st, attr, &value));
  return value;
}

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void sleep_until(double deadline) {
  double left = deadline - now_seconds();
  if (left <= 0) return;
  struct timespec ts = {(time_t)left, (long)((left - (double)(time_t)left) * 1e9)};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

/* A positive integer option value, or exits naming the option. */
static int positive_or_zero(const char *option, const char *text) {
  char *end = NULL;
  long value = strtol(text, &end, 10);
  if (end == text || *end != '\0' || value < 0 || value > 1000000) {
    fprintf(stderr, "federated_sgd: %s needs a whole number from 0 to 1000000, not '%s'\n", option, text);
    exit(2);
  }
  return (int)value;
}

/* "0,2": the facilities whose inputs the last average is the mean of. */
static void live_facilities(const xffl_state_t *st, char *text, size_t cap) {
  int live[64];
  size_t count = 0;
  CHECK(xffl_get_ints(st, XFFL_ATTR_LIVE_FACILITIES, live, 64, &count));
  text[0] = '\0';
  for (size_t i = 0, used = 0; i < count && used + 12 < cap; ++i)
    used += (size_t)snprintf(text + used, cap - used, i ? ",%d" : "%d", live[i]);
}

/* A small deterministic generator (xorshift64*), seeded per rank so every rank has its own samples. */
static uint64_t rng_state;
static double uniform(void) {
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return (double)((rng_state * 2685821657736338717ULL) >> 11) / 9007199254740992.0;
}

/* Facility f's data: features spread wider in later facilities, targets from the facility's own true model. */
static void make_data(int facility, float *x, float *y) {
  for (int s = 0; s < SAMPLES; ++s) {
    double target = 0;
    for (int j = 0; j < FEATURES; ++j) {
      double feature = (uniform() - 0.5) * 2.0 * (1.0 + 0.25 * facility);
      double truth = sin(0.05 * j) + 0.2 * cos(0.1 * j + facility); /* shared signal + local skew */
      x[(size_t)s * FEATURES + (size_t)j] = (float)feature;
      target += feature * truth;
    }
    y[s] = (float)(target + 0.01 * (uniform() - 0.5));
  }
}

/* Mean squared error of the full model w on samples [first, first + count). */
static float loss_and_gradient(const float *w, const float *x, const float *y, int first, int count, float *grad) {
  double loss = 0;
  if (grad) memset(grad, 0, sizeof(float) * FEATURES);
  for (int s = first; s < first + count; ++s) {
    const float *row = x + (size_t)(s % SAMPLES) * FEATURES;
    double prediction = 0;
    for (int j = 0; j < FEATURES; ++j) prediction += (double)row[j] * w[j];
    double error = prediction - y[s % SAMPLES];
    loss += error * error;
    if (grad)
      for (int j = 0; j < FEATURES; ++j) grad[j] += (float)(2.0 * error * row[j] / count);
  }
  return (float)(loss / count);
}

static uint64_t fnv1a(const void *data, size_t bytes) {
  const unsigned char *p = data;
  uint64_t hash = 1469598103934665603ULL;
  for (size_t i = 0; i < bytes; ++i) hash = (hash ^ p[i]) * 1099511628211ULL;
  return hash;
}

int main(int argc, char **argv) {
  int rounds = DEFAULT_ROUNDS, round_ms = 0;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
      rounds = positive_or_zero("--rounds", argv[++i]);
    } else if (strcmp(argv[i], "--round-ms") == 0 && i + 1 < argc) {
      round_ms = positive_or_zero("--round-ms", argv[++i]);
    } else {
      fprintf(stderr, "usage: federated_sgd [--rounds N] [--round-ms MS]\n");
      return 2;
    }
  }
  xffl_state_t *st = NULL;
  CHECK(xffl_state_from_env(&st));
  if (!xffl_is_federated_scaling_setup(st) || !xffl_is_hsdp_setup(st)) {
    fprintf(stderr, "federated_sgd: needs federated scaling with HSDP (xffl-run --federated ... --hsdp S)\n");
    return 2;
  }
  const int rank = get(st, XFFL_ATTR_RANK), world = get(st, XFFL_ATTR_WORLD_SIZE);
  const int facility = get(st, XFFL_ATTR_FEDERATED_RANK), facilities = get(st, XFFL_ATTR_FEDERATED_WORLD_SIZE);
  const int local_rank = get(st, XFFL_ATTR_FEDERATED_LOCAL_RANK);
  const int shards = get(st, XFFL_ATTR_REPLICA_LOCAL_SIZE), shard = get(st, XFFL_ATTR_REPLICA_LOCAL_RANK);
  const int is_sender = get(st, XFFL_ATTR_IS_SENDER);
  if (FEATURES % shards != 0) {
    fprintf(stderr, "federated_sgd: hsdp %d does not divide %d features\n", shards, FEATURES);
    return 2;
  }
  const size_t slice = FEATURES / shards;

  xffl_group_t *shard_group, *replica_group, *federation, *world_group;
  CHECK(xffl_get_group(st, XFFL_GROUP_HSDP_SHARD, 0, &shard_group));
  CHECK(xffl_get_group(st, XFFL_GROUP_HSDP_REPLICA, 0, &replica_group));
  CHECK(xffl_get_group(st, XFFL_GROUP_FEDERATION, 0, &federation));
  CHECK(xffl_get_group(st, XFFL_GROUP_WORLD, 0, &world_group));
  int job_size = 0; /* the WORLD group: the whole federation, or this facility's job in facility mode */
  CHECK(xffl_group_size(world_group, &job_size));
  const int facility_mode = job_size < world;

  float *x = malloc(sizeof(float) * SAMPLES * FEATURES), *y = malloc(sizeof(float) * SAMPLES);
  float *w = calloc(FEATURES, sizeof(float)), *grad = malloc(sizeof(float) * FEATURES);
  float *w_slice = calloc(slice, sizeof(float)), *grad_slice = malloc(sizeof(float) * slice);
  if (!x || !y || !w || !grad || !w_slice || !grad_slice) {
    fprintf(stderr, "federated_sgd: out of memory\n");
    return 1;
  }
  rng_state = 0x9E3779B97F4A7C15ULL ^ (uint64_t)(rank + 1) * 0xD1B54A32D192ED03ULL;
  make_data(facility, x, y);

  if (rank == 0 || (facility_mode && local_rank == 0))
    printf("training: %d facilities, %d ranks, %d parameters sharded %d ways, %d rounds of %d steps%s\n",
           facilities, world, FEATURES, shards, rounds, STEPS_PER_ROUND,
           facility_mode ? " (one job per facility)" : "");
  fflush(stdout);

  double average_seconds = 0;
  float final_loss = 0;
  int averages = 0;
  /* round: the federation's rounds completed (XFFL_ATTR_FEDERATION_ROUND), the same in every facility. */
  for (int round = 0; round < rounds;) {
    const double round_end = now_seconds() + 1e-3 * round_ms;
    float loss = 0;
    for (int i = 0, step = round * STEPS_PER_ROUND; i < STEPS_PER_ROUND; ++i, ++step) {
      CHECK(xffl_allgather(shard_group, w_slice, w, slice, XFFL_F32, NULL));       /* forward: whole model */
      loss = loss_and_gradient(w, x, y, step * BATCH, BATCH, grad);
      CHECK(xffl_reduce_scatter(shard_group, grad, grad_slice, slice, XFFL_F32, XFFL_AVG, NULL));
      CHECK(xffl_allreduce(replica_group, grad_slice, grad_slice, slice, XFFL_F32, XFFL_AVG, NULL));
      for (size_t j = 0; j < slice; ++j) w_slice[j] -= LEARNING_RATE * grad_slice[j];
    }
    /* The facility's loss before averaging: the mean over its ranks. */
    CHECK(xffl_allreduce(federation, &loss, &loss, 1, XFFL_F32, XFFL_AVG, NULL));

    double start = now_seconds();
    CHECK(xffl_federated_average(st, w_slice, slice, XFFL_F32, NULL));
    average_seconds += now_seconds() - start;
    ++averages;
    const int committed = get(st, XFFL_ATTR_FEDERATION_ROUND);
    /* A facility that returned received the federation's model of round `committed` instead of
       contributing its own: it resumes after that round. */
    const int received = committed != round + 1;
    round = committed;

    CHECK(xffl_allgather(shard_group, w_slice, w, slice, XFFL_F32, NULL));
    float global_loss = loss_and_gradient(w, x, y, 0, SAMPLES, NULL);
    CHECK(xffl_allreduce(federation, &global_loss, &global_loss, 1, XFFL_F32, XFFL_AVG, NULL));
    final_loss = global_loss;
    if (local_rank == 0 && !facility_mode)
      printf("round %2d  facility %d  training loss %.6f  loss of the averaged model %.6f\n", round - 1, facility,
             (double)loss, (double)global_loss);
    if (local_rank == 0 && facility_mode) {
      char live[256];
      live_facilities(st, live, sizeof live);
      if (received)
        printf("round %2d  facility %d  live %s  joined: received the federation's model  loss %.6f\n", round,
               facility, live, (double)global_loss);
      else
        printf("round %2d  facility %d  live %s  training loss %.6f  loss of the averaged model %.6f\n", round,
               facility, live, (double)loss, (double)global_loss);
    }
    fflush(stdout);
    CHECK(xffl_barrier(world_group)); /* keeps the printed rounds in order */
    sleep_until(round_end);
  }

  /* Proof: checksum every shard copy; all copies of one shard must be bit-identical. */
  int64_t mine[2] = {shard, (int64_t)fnv1a(w_slice, slice * sizeof(float))};
  int64_t *all = malloc(sizeof(int64_t) * 2 * (size_t)job_size);
  CHECK(xffl_allgather(world_group, mine, all, 2, XFFL_I64, NULL));
  int64_t crossing[1] = {is_sender ? (int64_t)(slice * sizeof(float)) : 0};
  CHECK(xffl_allreduce(world_group, crossing, crossing, 1, XFFL_I64, XFFL_SUM, NULL));
  /* The averaged model's loss over every facility's data: the mean of the facilities' losses. */
  float loss_sum = local_rank == 0 ? final_loss : 0.0f;
  CHECK(xffl_allreduce(world_group, &loss_sum, &loss_sum, 1, XFFL_F32, XFFL_SUM, NULL));
  int wire_format = 0, error_feedback = 0;
  CHECK(xffl_get_option(st, XFFL_OPT_WIRE_FORMAT, &wire_format));
  CHECK(xffl_get_option(st, XFFL_OPT_ERROR_FEEDBACK, &error_feedback));
  int identical = 1;
  for (int r = 0; r < job_size; ++r)
    for (int q = 0; q < job_size; ++q)
      if (all[2 * r] == all[2 * q] && all[2 * r + 1] != all[2 * q + 1]) identical = 0;
  if (rank == 0 || (facility_mode && local_rank == 0)) {
    printf("federated averaging: %d rounds, %.3f ms per round on rank %d, %zu bytes per shard, %lld bytes sent "
           "across facilities per round by the%s senders\n",
           averages, averages ? 1e3 * average_seconds / averages : 0.0, rank, slice * sizeof(float),
           (long long)crossing[0] * (facilities - 1), facility_mode ? " facility's" : "");
    for (int p = 0; p < shards; ++p) {
      int copies = 0;
      for (int r = 0; r < job_size; ++r) copies += all[2 * r] == p;
      for (int r = 0; r < job_size; ++r)
        if (all[2 * r] == p) {
          printf("shard %d: %d copies, checksum %016llx\n", p, copies, (unsigned long long)all[2 * r + 1]);
          break;
        }
    }
    if (facility_mode) {
      printf("final loss %.6f of the averaged model over facility %d's data (wire format %d, error feedback %d)\n",
             (double)final_loss, facility, wire_format, error_feedback);
      printf(identical ? "every copy of every shard is bit-identical across the %d ranks of facility %d\n"
                       : "MISMATCH: copies of a shard differ across the %d ranks of facility %d\n",
             job_size, facility);
    } else {
      printf("final loss %.6f of the averaged model over all facilities (wire format %d, error feedback %d)\n",
             (double)loss_sum / facilities, wire_format, error_feedback);
      printf(identical ? "every copy of every shard is bit-identical across %d ranks and %d facilities\n"
                       : "MISMATCH: copies of a shard differ across %d ranks and %d facilities\n",
             world, facilities);
    }
  }
  free(all);
  free(x);
  free(y);
  free(w);
  free(grad);
  free(w_slice);
  free(grad_slice);
  xffl_state_destroy(st);
  return identical ? 0 : 3;
}
