/*
 * The peer of facilities-average-bench: the same federated average done with Open MPI (ob1 + tcp BTL over
 * the facilities' TUN devices), started by mpirun inside facility 0's namespace (run.sh explains how).
 *
 *   facilities-mpi-average-bench COUNT hier|flat ITERATIONS SIZES HSDP
 *
 * The groups come from xffl's planner (backend NONE: no communication): flat = MPI_Allreduce(SUM) over
 * each rank's FEDERATED group, then a local scale by 1/G (MPI has no average); hier = the senders'
 * MPI_Allreduce over FEDERATED, then MPI_Bcast over the REPLICA group from the sender: the same data
 * movement as XFFL_FEDAVG_HIERARCHICAL. Prints the same RESULT lines as facilities-average-bench.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xffl.h>

static int my_rank = -1;

#define CHECK(call)                                                                                   \
  do {                                                                                                \
    xffl_status_t check_rc_ = (call);                                                                 \
    if (check_rc_ != XFFL_OK) {                                                                       \
      fprintf(stderr, "rank %d: %s failed: %s: %s\n", my_rank, #call, xffl_status_string(check_rc_), \
              xffl_last_error_message());                                                             \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                                   \
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

/* An MPI communicator with the members of an xffl group (split by the group's smallest rank); the
 * index of `root` in it is written to *root_index. MPI_COMM_NULL when `member` is 0. */
static MPI_Comm communicator_of(xffl_group_t *group, int member, int root, int *root_index) {
  int ranks[4096];
  size_t n = 0;
  CHECK(xffl_group_ranks(group, ranks, 4096, &n));
  for (size_t k = 0; k < n; ++k)
    if (ranks[k] == root) *root_index = (int)k;
  MPI_Comm comm;
  MPI_Comm_split(MPI_COMM_WORLD, member ? ranks[0] : MPI_UNDEFINED, my_rank, &comm);
  return comm;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int world = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &my_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  if (argc != 6 || (strcmp(argv[2], "hier") != 0 && strcmp(argv[2], "flat") != 0)) {
    if (my_rank == 0) fprintf(stderr, "usage: facilities-mpi-average-bench COUNT hier|flat ITERATIONS SIZES HSDP\n");
    MPI_Finalize();
    return 2;
  }
  const size_t count = (size_t)strtoull(argv[1], NULL, 10);
  const int flat = strcmp(argv[2], "flat") == 0;
  const int iterations = atoi(argv[3]);
  int sizes[64];
  size_t n_sizes = 0;
  for (char *p = strtok(argv[4], ","); p && n_sizes < 64; p = strtok(NULL, ",")) sizes[n_sizes++] = atoi(p);
  const int hsdp = atoi(argv[5]);
  const char *veth = getenv("FACILITY_VETH");

  /* The plan only: who is in which group. */
  xffl_state_t *st = NULL;
  CHECK(xffl_state_create(&st));
  CHECK(xffl_set_global(st, XFFL_BACKEND_NONE, XFFL_DEVICE_CPU, "127.0.0.1", 1, my_rank, world));
  CHECK(xffl_federated_scaling(st, sizes, n_sizes, hsdp));
  int is_sender = 1, sender = my_rank, facilities = 0;
  CHECK(xffl_get_int(st, XFFL_ATTR_FEDERATED_WORLD_SIZE, &facilities));
  if (xffl_get_int(st, XFFL_ATTR_IS_SENDER, &is_sender) != XFFL_OK) is_sender = 1;
  if (!is_sender) CHECK(xffl_get_int(st, XFFL_ATTR_RECEIVE_FROM, &sender));
  xffl_group_t *federated = NULL, *replica = NULL;
  CHECK(xffl_get_group(st, XFFL_GROUP_FEDERATED, 0, &federated));
  const int have_replica = xffl_get_group(st, XFFL_GROUP_REPLICA, 0, &replica) == XFFL_OK;
  int unused = 0, sender_index = 0;
  const int crosses = flat || is_sender;
  MPI_Comm across = communicator_of(federated, crosses, my_rank, &unused);
  MPI_Comm inside = MPI_COMM_NULL;
  if (!flat && have_replica) inside = communicator_of(replica, 1, sender, &sender_index);

  float *shard = malloc(count * sizeof(float));
  for (size_t i = 0; i < count; ++i) shard[i] = (float)((i + (size_t)my_rank) % 1000) * 0.001f;
  const float scale = 1.0f / (float)facilities;
  for (int it = -1; it < iterations; ++it) { /* iteration -1: warm-up */
    MPI_Barrier(MPI_COMM_WORLD);
    long long tx0 = 0, rx0 = 0;
    if (my_rank == 0 && veth) {
      tx0 = read_counter(veth, "tx_bytes");
      rx0 = read_counter(veth, "rx_bytes");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    if (across != MPI_COMM_NULL) {
      MPI_Allreduce(MPI_IN_PLACE, shard, (int)count, MPI_FLOAT, MPI_SUM, across);
      for (size_t i = 0; i < count; ++i) shard[i] *= scale;
    }
    if (inside != MPI_COMM_NULL) MPI_Bcast(shard, (int)count, MPI_FLOAT, sender_index, inside);
    double elapsed = MPI_Wtime() - start;
    MPI_Allreduce(MPI_IN_PLACE, &elapsed, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (my_rank == 0 && it >= 0) {
      const long long tx = veth ? read_counter(veth, "tx_bytes") - tx0 : -1;
      const long long rx = veth ? read_counter(veth, "rx_bytes") - rx0 : -1;
      printf("RESULT impl=mpi strategy=%s count=%zu iteration=%d seconds=%.4f link_tx=%lld link_rx=%lld\n",
             argv[2], count, it, elapsed, tx, rx);
      fflush(stdout);
    }
  }
  free(shard);
  if (across != MPI_COMM_NULL) MPI_Comm_free(&across);
  if (inside != MPI_COMM_NULL) MPI_Comm_free(&inside);
  xffl_state_destroy(st);
  MPI_Finalize();
  return 0;
}
