/*
 * The store's host dies: rank 0 (which serves the rendezvous store) leaves right after set_global.
 *   - With 4 ranks or more, ranks 1 and 2 used a pair group before that, so they hold endpoints to
 *     each other: the store is not needed any more between them, and an allreduce on that pair must
 *     still work.
 *   - Then ranks 1 .. N-1 make a group of them all. Its identity comes from the store (one round
 *     trip: what keeps live groups apart), which is gone: every member must get a clear error
 *     (XFFL_ENETWORK, XFFL_EPEER or XFFL_ETIMEOUT) naming the store's address, this rank and the group,
 *     never hang; destroy must still return.
 *
 * Rank 0 leaves only once every rank is past set_global, and the survivors wait (bounded) until a
 * connection to MASTER_ADDR:MASTER_PORT is refused, so the store is surely gone when they need it.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "fault_check.h"

/* 1 once nothing listens at the store's address any more; 0 if it still answers after the bound. */
static int wait_until_store_gone(const char *addr, int port, double bound_ms) {
  const double started = fault_now_ms();
  while (fault_now_ms() - started < bound_ms) {
    struct sockaddr_in where;
    memset(&where, 0, sizeof where);
    where.sin_family = AF_INET;
    where.sin_port = htons((uint16_t)port);
    if (inet_pton(AF_INET, addr, &where.sin_addr) != 1) return 0;
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return 0;
    const int answered = connect(fd, (struct sockaddr *)&where, sizeof where) == 0;
    close(fd);
    if (!answered) return 1;
    usleep(20 * 1000);
  }
  return 0;
}

int main(void) {
  const int rank = fault_rank(), world = fault_world();
  const char *addr = getenv("MASTER_ADDR");
  const int port = fault_env_int("MASTER_PORT");
  if (world < 3 || !addr) {
    fprintf(stderr, "store_host_loss needs at least 3 ranks and MASTER_ADDR\n");
    return 2;
  }
  char store_address[300];
  snprintf(store_address, sizeof store_address, "%s:%d", addr, port);

  xffl_state_t *st = NULL;
  const double rendezvous_started = fault_now_ms();
  xffl_status_t rc = xffl_state_from_env(&st);
  if (rc != XFFL_OK) {
    fault_record("xffl_state_from_env", rc, rendezvous_started);
    fault_check(0, "the rendezvous itself failed; this scenario starts after it");
    return fault_finish("store_host_loss");
  }
  const int pair_members[2] = {1, 2};
  xffl_group_t *pair = NULL;
  if (world >= 4 && (rank == 1 || rank == 2)) { /* endpoints between 1 and 2, made while the store is up */
    int64_t one = 1, total = 0;
    rc = xffl_create_process_group(st, pair_members, 2, "pair 1-2", &pair);
    if (rc == XFFL_OK) rc = xffl_allreduce(pair, &one, &total, 1, XFFL_I64, XFFL_SUM, NULL);
    fault_check(rc == XFFL_OK && total == 2, "allreduce on the pair with the store up: %s: %s",
                xffl_status_string(rc), xffl_last_error_message());
  }
  /* Everyone past set_global first: a store host dying at once could otherwise take the answers to
   * the others' last set_global barrier with it (they would fail in set_global, not after it). */
  fault_check(fault_meet("past set_global", world, fault_timeout_ms()), "not every rank got past set_global");
  if (rank == 0) fault_vanish("right after set_global, taking the store with it");

  fault_check(wait_until_store_gone(addr, port, fault_timeout_ms()), "the store at %s still answers", store_address);

  if (pair) {
    int64_t one = 1, total = 0;
    rc = xffl_allreduce(pair, &one, &total, 1, XFFL_I64, XFFL_SUM, NULL);
    fault_check(rc == XFFL_OK && total == 2, "allreduce on the pair after the store died: %s: %s",
                xffl_status_string(rc), rc == XFFL_OK ? "" : xffl_last_error_message());
    xffl_group_destroy(pair);
  }

  int *members = malloc(sizeof(int) * (size_t)(world - 1));
  for (int r = 1; r < world; ++r) members[r - 1] = r;
  xffl_group_t *group = NULL;
  const double started = fault_now_ms();
  rc = xffl_create_process_group(st, members, (size_t)(world - 1), "ranks without the store's host", &group);
  const fault_seen_t seen = fault_record("making a group without the store", rc, started);
  fault_check(seen.status == XFFL_ENETWORK || seen.status == XFFL_EPEER || seen.status == XFFL_ETIMEOUT,
              "xffl_create_process_group returned %s, expected XFFL_ENETWORK, XFFL_EPEER or XFFL_ETIMEOUT",
              xffl_status_string(seen.status));
  fault_check(fault_contains(seen.message, store_address), "the message does not name the store's address %s",
              store_address);
  fault_check(fault_names_rank(seen.message, rank), "the message does not name this rank (%d)", rank);
  fault_check(fault_contains(seen.message, "ranks without the store's host"), "the message does not name the group");
  xffl_group_destroy(group);
  free(members);
  const double destroy_started = fault_now_ms();
  xffl_state_destroy(st);
  printf("rank %d: xffl_state_destroy returned after %.0f ms\n", rank, fault_now_ms() - destroy_started);
  return fault_finish("store_host_loss");
}
