/*
 * A rank that dies while a nonblocking federated average is in flight (xffl/request.h). Every rank is
 * its own federated group (sizes 1, ..., 1), so the average is one all-reduce over all ranks. All ranks
 * meet at a barrier and start a 64 MiB average; the victim leaves at once (_exit(0), its request's
 * thread mid-run). The survivors compute on their own thread, testing the request between steps: the
 * request must end, and xffl_request_test and xffl_request_wait must return XFFL_ETIMEOUT or XFFL_EPEER
 * naming the victim and this rank, never hang. Should the first request succeed (a scheduling accident:
 * the victim's thread finished before it left), a second one must fail the same way. Then free, and
 * destroy, must still return.
 *
 * usage: request_loss [VICTIM] [MIB]   (default: the last rank, 64 MiB)
 */
#include "fault_check.h"

static void compute_step(float *work, size_t count) {
  for (size_t i = 0; i < count; ++i) work[i] = work[i] * 0.999f + 0.5f;
}

int main(int argc, char **argv) {
  const int rank = fault_rank(), world = fault_world();
  const int victim = argc > 1 ? atoi(argv[1]) : world - 1;
  const size_t mib = argc > 2 ? (size_t)atoi(argv[2]) : 64;
  const size_t count = mib * 1024 * 1024 / sizeof(float);
  float *model = malloc(count * sizeof(float));
  if (!model) {
    fprintf(stderr, "rank %d: cannot allocate %zu MiB\n", rank, mib);
    return 2;
  }
  for (size_t i = 0; i < count; ++i) model[i] = (float)(rank + 1);

  xffl_state_t *st = NULL;
  xffl_status_t rc = xffl_state_from_env(&st);
  int sizes[64];
  for (int r = 0; r < world && r < 64; ++r) sizes[r] = 1;
  if (rc == XFFL_OK && xffl_is_fsdp_setup(st)) rc = xffl_unset_fsdp(st); /* from_env's default layout */
  if (rc == XFFL_OK) rc = xffl_federated_scaling(st, sizes, (size_t)world, 0);
  xffl_group_t *world_group = NULL;
  if (rc == XFFL_OK) rc = xffl_get_group(st, XFFL_GROUP_WORLD, 0, &world_group);
  if (rc == XFFL_OK) rc = xffl_barrier(world_group);
  if (rc != XFFL_OK) {
    fault_record("setup (from_env, federated_scaling, barrier)", rc, fault_now_ms());
    fault_check(0, "the setup failed; this scenario starts after it");
    return fault_finish("request_loss");
  }

  xffl_request_t *req = NULL;
  if (rank == victim) {
    rc = xffl_federated_average_start(st, model, count, XFFL_F32, NULL, &req);
    fault_vanish(rc == XFFL_OK ? "with its request in flight" : "after its start failed");
  }

  enum { WORK = 1 << 14 };
  static float work[WORK];
  fault_seen_t seen;
  int attempt = 0;
  do {
    ++attempt;
    const double started = fault_now_ms();
    rc = xffl_federated_average_start(st, model, count, XFFL_F32, NULL, &req);
    if (rc != XFFL_OK) {
      seen = fault_record("xffl_federated_average_start", rc, started);
      break;
    }
    int done = 0;
    while (!done && rc == XFFL_OK) {
      compute_step(work, WORK);
      rc = xffl_request_test(req, &done);
    }
    seen = fault_record(attempt == 1 ? "xffl_request_test, the victim dying in flight"
                                     : "xffl_request_test, the victim gone",
                        rc, started);
    fault_check(done == 1, "xffl_request_test returned %s without saying done", xffl_status_string(rc));
    const xffl_status_t waited = xffl_request_wait(req);
    fault_check(waited == rc, "xffl_request_wait after the test returned %s, the test %s", xffl_status_string(waited),
                xffl_status_string(rc));
    fault_check(waited == XFFL_OK || fault_contains(xffl_last_error_message(), "xffl_request_wait"),
                "xffl_request_wait's message does not name it: %s", xffl_last_error_message());
    xffl_request_free(req);
  } while (rc == XFFL_OK && attempt < 2);
  fault_expect_peer_loss(&seen, "the request", victim);
  fault_check(fault_contains(seen.message, "xffl_federated_average_start"),
              "the request's message does not name the call that started it: %s", seen.message);

  fault_check(fault_meet("survivors", world - 1, 2 * fault_timeout_ms()), "not every surviving rank got this far");
  const double destroy_started = fault_now_ms();
  xffl_state_destroy(st);
  printf("rank %d: xffl_state_destroy returned after %.0f ms\n", rank, fault_now_ms() - destroy_started);
  free(model);
  return fault_finish("request_loss");
}
