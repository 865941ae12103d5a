/*
 * Started by a real launcher (mpirun, srun) as every rank, with no MASTER_ADDR: xffl_state_from_env
 * must place each rank as the launcher numbered it and give a WORLD group whose allreduce is correct.
 *
 *   check_launcher EXPECTED_WORLD_SIZE MASTER          the checks; MASTER is the master address the
 *                                                      state must report ("pmix", a host, or "any")
 *   check_launcher 2 timeout                           rank 0 calls xffl_state_from_env alone and must get
 *                                                      XFFL_ETIMEOUT naming the PMIx fence; rank 1 comes
 *                                                      after rank 0 gave up and must fail
 *   check_launcher 2 no-server                         one process with PMIx variables but no server:
 *                                                      XFFL_EBACKEND naming PMIx_Init
 *   check_launcher EXPECTED_WORLD_SIZE port-taken      rank 0's MASTER_PORT is taken: every rank fails
 *                                                      at once, the others with rank 0's reason
 *
 * The launcher's own numbering is read from its variables (OMPI_COMM_WORLD_RANK / SLURM_PROCID and the
 * local ones) to compare with what the state says, and libpmix.so.2 must be loaded exactly when MASTER is
 * "pmix". With MASTER "pmix" two states are made one after the
 * other, so that a second exchange in one process works too. Prints "rank R: launcher checks passed"
 * and exits 0, or names the first failure and exits 1.
 */
#define _GNU_SOURCE /* RTLD_NOLOAD */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

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

#define EXPECT_EQ(what, got, want)                                                                 \
  do {                                                                                             \
    long long got_ = (got), want_ = (want);                                                        \
    if (got_ != want_) {                                                                           \
      fprintf(stderr, "rank %d: %s is %lld, expected %lld\n", rank, what, got_, want_);            \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

/* The first of the variables that is set, as an integer; -1 when none is. */
static int launcher_value(const char *first, const char *second) {
  const char *text = getenv(first);
  if (!text || !*text) text = second ? getenv(second) : NULL;
  return text && *text ? atoi(text) : -1;
}

static int get(const xffl_state_t *st, xffl_attr_t attr) {
  int value = 0;
  CHECK(xffl_get_int(st, attr, &value));
  return value;
}

static void check_state(int world_size, const char *master) {
  const int launcher_rank = launcher_value("OMPI_COMM_WORLD_RANK", "SLURM_PROCID");
  const int local_rank = launcher_value("OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID");
  rank = launcher_rank;
  xffl_state_t *st = NULL;
  CHECK(xffl_state_from_env(&st));

  EXPECT_EQ("XFFL_ATTR_RANK", get(st, XFFL_ATTR_RANK), launcher_rank);
  EXPECT_EQ("XFFL_ATTR_WORLD_SIZE", get(st, XFFL_ATTR_WORLD_SIZE), world_size);
  EXPECT_EQ("XFFL_ATTR_NODE_LOCAL_RANK", get(st, XFFL_ATTR_NODE_LOCAL_RANK), local_rank);
  EXPECT_EQ("XFFL_ATTR_NODE_LOCAL_SIZE", get(st, XFFL_ATTR_NODE_LOCAL_SIZE), world_size);  /* one host */
  EXPECT_EQ("XFFL_ATTR_NODE_RANK", get(st, XFFL_ATTR_NODE_RANK), 0);
  EXPECT_EQ("XFFL_ATTR_NODE_WORLD_SIZE", get(st, XFFL_ATTR_NODE_WORLD_SIZE), 1);
  if (strcmp(master, "any") != 0) {
    char addr[256];
    size_t len = 0;
    CHECK(xffl_get_master_addr(st, addr, sizeof addr, &len));
    if (strcmp(addr, master) != 0) {
      fprintf(stderr, "rank %d: master address is '%s', expected '%s'\n", rank, addr, master);
      exit(1);
    }
  }

  /* PMIx is loaded only where the address went through it: a plain launch never maps it. */
  void *pmix = dlopen("libpmix.so.2", RTLD_NOW | RTLD_NOLOAD);
  if ((pmix != NULL) != (strcmp(master, "pmix") == 0)) {
    fprintf(stderr, "rank %d: libpmix.so.2 is %s after a launch with master '%s'\n", rank,
            pmix ? "loaded" : "not loaded", master);
    exit(1);
  }
  if (pmix) dlclose(pmix); /* only the reference RTLD_NOLOAD took */

  xffl_group_t *world = NULL;
  CHECK(xffl_get_group(st, XFFL_GROUP_WORLD, 0, &world));
  int group_rank = -1, group_size = -1;
  CHECK(xffl_group_rank(world, &group_rank));
  CHECK(xffl_group_size(world, &group_size));
  EXPECT_EQ("the WORLD group's rank", group_rank, launcher_rank);
  EXPECT_EQ("the WORLD group's size", group_size, world_size);

  /* Every rank contributes rank + 1 + i at index i: the sum names a missing or doubled rank. */
  enum { COUNT = 1000 };
  static long long values[COUNT], sums[COUNT];
  for (int i = 0; i < COUNT; ++i) values[i] = launcher_rank + 1 + i;
  CHECK(xffl_allreduce(world, values, sums, COUNT, XFFL_I64, XFFL_SUM, NULL));
  const long long ranks_sum = (long long)world_size * (world_size + 1) / 2;
  for (int i = 0; i < COUNT; ++i) EXPECT_EQ("a WORLD allreduce sum", sums[i], ranks_sum + (long long)world_size * i);

  /* Each rank placed once: gathering the ranks gives 0, 1, ..., W-1 in order. */
  int *all = malloc(sizeof(int) * (size_t)world_size);
  CHECK(xffl_allgather(world, &launcher_rank, all, 1, XFFL_I32, NULL));
  for (int r = 0; r < world_size; ++r) EXPECT_EQ("the allgathered rank", all[r], r);
  free(all);
  xffl_state_destroy(st);
}

/* "check_launcher.<PMIx namespace>.rank0-gave-up" in the working folder (the launcher starts every rank
 * in the same one): rank 0 creates it once its fence has timed out, and the others wait for it. */
static void gave_up_path(char *path, size_t cap) {
  const char *nspace = getenv("PMIX_NAMESPACE");
  snprintf(path, cap, "check_launcher.%s.rank0-gave-up", nspace ? nspace : "none");
}

static int check_timeout(void) {
  rank = launcher_value("OMPI_COMM_WORLD_RANK", "SLURM_PROCID");
  char path[512];
  gave_up_path(path, sizeof path);
  xffl_state_t *st = NULL;
  if (rank != 0) {
    /* Join only after rank 0 gave up (bounded: 120 s), so that rank 0 sees a timeout, not a departed
     * rank; then join, as mpirun wants every rank to meet PMIx once one did: this fence can only fail. */
    int waited_ms = 0;
    while (access(path, F_OK) != 0) {
      if (waited_ms >= 120000) {
        fprintf(stderr, "rank %d: rank 0 did not give up within 120 s (no %s)\n", rank, path);
        return 1;
      }
      usleep(50000);
      waited_ms += 50;
    }
    unlink(path); /* the only other rank: nobody else waits for it */
    xffl_status_t rc = xffl_state_from_env(&st);
    if (rc == XFFL_OK) {
      fprintf(stderr, "rank %d: a late rank joined a store that rank 0 gave up on\n", rank);
      xffl_state_destroy(st);
      return 1;
    }
    printf("rank %d: the late join failed as it must: %s: %s\n", rank, xffl_status_string(rc),
           xffl_last_error_message());
    return 0;
  }
  unlink(path);
  xffl_status_t rc = xffl_state_from_env(&st);
  const char *message = xffl_last_error_message();
  int passed = rc == XFFL_ETIMEOUT && strstr(message, "rank 0") && strstr(message, "PMIx_Fence");
  if (passed) printf("rank 0: timeout check passed: %s\n", message);
  else
    fprintf(stderr, "rank 0: expected XFFL_ETIMEOUT naming rank 0 and PMIx_Fence, got %s: %s\n",
            xffl_status_string(rc), message);
  xffl_state_destroy(st);
  FILE *gave_up = fopen(path, "w"); /* the others may come now, whatever happened here */
  if (gave_up) fclose(gave_up);
  return passed ? 0 : 1;
}

/* PMIX_RANK and PMIX_NAMESPACE set by hand, no PMIx server: XFFL_EBACKEND naming PMIx_Init, at once. */
static int check_no_server(void) {
  rank = 0;
  xffl_state_t *st = NULL;
  xffl_status_t rc = xffl_state_from_env(&st);
  const char *message = xffl_last_error_message();
  if (rc != XFFL_EBACKEND || !strstr(message, "rank 0") || !strstr(message, "PMIx_Init")) {
    fprintf(stderr, "rank 0: expected XFFL_EBACKEND naming rank 0 and PMIx_Init, got %s: %s\n",
            xffl_status_string(rc), message);
    xffl_state_destroy(st);
    return 1;
  }
  printf("rank 0: no-server check passed: %s\n", message);
  return 0;
}

/* Rank 0 holds 127.0.0.1:P and sets MASTER_PORT=P (the others learn the port through PMIx, so only rank
 * 0 reads it): rank 0's store cannot start, rank 0 fails with the bind error, and the other ranks fail
 * at once with rank 0's reason instead of waiting for their timeout. */
static int check_port_taken(void) {
  rank = launcher_value("OMPI_COMM_WORLD_RANK", "SLURM_PROCID");
  int holder = -1;
  if (rank == 0) {
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    holder = socket(AF_INET, SOCK_STREAM, 0);
    if (holder < 0 || bind(holder, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(holder, 1) != 0 ||
        getsockname(holder, (struct sockaddr *)&addr, &len) != 0) {
      perror("rank 0: holding a loopback port");
      return 1;
    }
    char port[16];
    snprintf(port, sizeof port, "%d", ntohs(addr.sin_port));
    setenv("MASTER_PORT", port, 1);
  }
  xffl_state_t *st = NULL;
  xffl_status_t rc = xffl_state_from_env(&st);
  const char *message = xffl_last_error_message();
  const char *expected = rank == 0 ? "rank 0" : "rank 0 could not start the store";
  if (rc == XFFL_OK || rc == XFFL_ETIMEOUT || !strstr(message, expected)) {
    fprintf(stderr, "rank %d: expected an error naming '%s' (not a timeout), got %s: %s\n", rank, expected,
            xffl_status_string(rc), message);
    xffl_state_destroy(st);
    return 1;
  }
  printf("rank %d: port-taken check passed: %s: %s\n", rank, xffl_status_string(rc), message);
  if (holder >= 0) close(holder);
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s EXPECTED_WORLD_SIZE MASTER|timeout|no-server|port-taken\n", argv[0]);
    return 2;
  }
  const int world_size = atoi(argv[1]);
  if (strcmp(argv[2], "timeout") == 0) return check_timeout();
  if (strcmp(argv[2], "no-server") == 0) return check_no_server();
  if (strcmp(argv[2], "port-taken") == 0) return check_port_taken();
  check_state(world_size, argv[2]);
  /* Through PMIx, a second state of the same process exchanges a second address (on a free port). With
   * a fixed MASTER_PORT the first store's port may still be held by its lingering close. */
  if (strcmp(argv[2], "pmix") == 0) check_state(world_size, argv[2]);
  printf("rank %d: launcher checks passed\n", rank);
  return 0;
}
