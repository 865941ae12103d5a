/*
 * XFFL_AUTH_TOKEN at the rendezvous. xffl-run hands one environment to every rank, so each rank sets
 * its own token (or removes it) before xffl_state_from_env. Modes:
 *   same        every rank holds the same secret: the job comes up and an allreduce over WORLD works.
 *   one_wrong   the last rank holds another secret: it gets XFFL_EAUTH naming the store's address;
 *               the others time out (XFFL_ETIMEOUT or XFFL_EPEER) naming it.
 *   store_only  only rank 0 (the store) has a token: every other rank gets XFFL_EAUTH naming the
 *               store's address; rank 0 times out naming all of them.
 *   client_only every rank but rank 0 has a token: they get XFFL_EAUTH (they refuse a store that does
 *               not authenticate); rank 0 fails (XFFL_ETIMEOUT or XFFL_EPEER) naming them.
 *
 * usage: auth_tokens MODE
 */
#include "fault_check.h"

static const char *kSecret = "correct horse battery staple";

static void set_token(const char *token) {
  if (token)
    setenv("XFFL_AUTH_TOKEN", token, 1);
  else
    unsetenv("XFFL_AUTH_TOKEN");
}

/* Rank 0 waits in vain at the rendezvous: it must say who is missing. */
static void expect_names_others(const char *message, int world, int all) {
  int named = 0;
  for (int r = 1; r < world; ++r) named += fault_names_rank(message, r);
  if (all)
    fault_check(named == world - 1, "the message does not name every rank that never arrived: %s", message);
  else
    fault_check(named > 0, "the message names none of the ranks that never arrived: %s", message);
}

static void expect_refused(const fault_seen_t *seen, const char *store_address) {
  fault_check(seen->status == XFFL_EAUTH, "expected XFFL_EAUTH, got %s", xffl_status_string(seen->status));
  fault_check(fault_contains(seen->message, store_address), "the message does not name the store at %s",
              store_address);
  fault_check(fault_names_rank(seen->message, fault_rank()), "the message does not name this rank");
}

int main(int argc, char **argv) {
  const int rank = fault_rank(), world = fault_world();
  const char *mode = argc > 1 ? argv[1] : "";
  const int last = world - 1;
  char store_address[300];
  snprintf(store_address, sizeof store_address, "%s:%d", getenv("MASTER_ADDR") ? getenv("MASTER_ADDR") : "?",
           fault_env_int("MASTER_PORT"));

  if (strcmp(mode, "same") == 0)
    set_token(kSecret);
  else if (strcmp(mode, "one_wrong") == 0)
    set_token(rank == last ? "a guess" : kSecret);
  else if (strcmp(mode, "store_only") == 0)
    set_token(rank == 0 ? kSecret : NULL);
  else if (strcmp(mode, "client_only") == 0)
    set_token(rank == 0 ? NULL : kSecret);
  else {
    fprintf(stderr, "usage: auth_tokens same|one_wrong|store_only|client_only\n");
    return 2;
  }

  xffl_state_t *st = NULL;
  const double started = fault_now_ms();
  const xffl_status_t rc = xffl_state_from_env(&st);
  const fault_seen_t seen = fault_record("xffl_state_from_env", rc, started);

  if (strcmp(mode, "same") == 0) {
    fault_check(rc == XFFL_OK, "the same token on every rank was refused");
    if (rc == XFFL_OK) {
      xffl_group_t *world_group = NULL;
      int64_t one = 1, total = 0;
      xffl_status_t used = xffl_get_group(st, XFFL_GROUP_WORLD, 0, &world_group);
      if (used == XFFL_OK) used = xffl_allreduce(world_group, &one, &total, 1, XFFL_I64, XFFL_SUM, NULL);
      fault_check(used == XFFL_OK, "allreduce after an authenticated rendezvous: %s: %s", xffl_status_string(used),
                  xffl_last_error_message());
      fault_check(used != XFFL_OK || total == world, "allreduce gave %lld, expected %d", (long long)total, world);
    }
  } else if (strcmp(mode, "one_wrong") == 0) {
    if (rank == last)
      expect_refused(&seen, store_address);
    else
      fault_expect_peer_loss(&seen, "xffl_state_from_env", last);
  } else { /* store_only, client_only: no client comes through */
    if (rank != 0) {
      expect_refused(&seen, store_address);
    } else {
      fault_check(seen.status == XFFL_ETIMEOUT || seen.status == XFFL_EPEER, "rank 0: expected XFFL_ETIMEOUT or "
                  "XFFL_EPEER, got %s", xffl_status_string(seen.status));
      /* store_only: the store refused them all, so they never joined and it names them all at the
       * timeout. client_only: the store let them join and they left (they refused the store): it
       * fails fast, naming those it has seen leave by then. */
      expect_names_others(seen.message, world, strcmp(mode, "store_only") == 0);
    }
  }
  fault_check(rc == XFFL_OK || st == NULL, "xffl_state_from_env failed but wrote a state");
  xffl_state_destroy(st);
  return fault_finish(mode);
}
