// The watchdog: a peer that never joins or never finishes gives XFFL_ETIMEOUT after ncclCommAbort, an
// asynchronous NCCL error gives XFFL_EPEER after abort; messages name the rank, the group and what was
// awaited; an aborted communicator refuses later calls with the same status. Never a hang.

#include <cstring>

#include "comm/nccl/nccl_communicator.h"
#include "state/backend_factory.h"
#include "state/options.h"
#include "nccl_harness.h"

// cmocka after the C++ headers: its fail() macro would clash with xffl::fail.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {  // cmocka has no extern "C" of its own
#include <cmocka.h>
}

using namespace xffl;
using namespace xffl::comm;
using xffl::test::FakeNccl;

namespace {

const int kShortTimeoutMs = 200;

void assert_contains(const std::string &text, const char *part) {
  if (text.find(part) == std::string::npos) fail_msg("'%s' does not contain '%s'", text.c_str(), part);
}

GroupSpec world_of(int rank, int world) {
  return GroupSpec{topology::RankList::progression(0, 1, world), rank, "world group", 1};
}

void peer_that_never_finishes_times_out_after_abort(void **) {
  auto fake = std::make_shared<FakeNccl>(1);
  harness::Outcome later;
  auto outcomes = harness::run_ranks(fake, 2, kShortTimeoutMs, [&](int rank, NcclBackend &backend) {
    backend.register_world(world_of(rank, 2));
    auto group = backend.create_communicator(world_of(rank, 2));
    if (rank == 1) return;  // rank 1 never calls the allreduce
    float x[4] = {1, 2, 3, 4};
    try {
      group->allreduce(x, x, 4, XFFL_F32, XFFL_AVG, nullptr);
    } catch (const Error &error) {
      try {
        group->barrier();  // the communicator stays aborted
      } catch (const Error &again) {
        later = harness::Outcome{again.status(), again.what()};
      }
      throw;
    }
  });
  assert_int_equal(outcomes[0].status, XFFL_ETIMEOUT);
  assert_contains(outcomes[0].message, "rank 0: timed out after 200 ms in world group");
  assert_contains(outcomes[0].message, "allreduce of 4 f32 (avg)");
  assert_contains(outcomes[0].message, "aborted");
  assert_int_equal(outcomes[1].status, XFFL_OK);
  assert_int_equal(fake->count("abort", 0), 1);
  assert_int_equal(later.status, XFFL_ETIMEOUT);
  assert_contains(later.message, "was aborted earlier");
}

void async_error_is_a_peer_failure(void **) {
  auto fake = std::make_shared<FakeNccl>(1);
  auto outcomes = harness::run_ranks(fake, 2, 20000, [&](int rank, NcclBackend &backend) {
    backend.register_world(world_of(rank, 2));
    auto group = backend.create_communicator(world_of(rank, 2));
    if (rank == 1) return;
    fake->inject_async_error(0, nccl::kNcclRemoteError);
    int x = 1;
    group->allreduce(&x, &x, 1, XFFL_I32, XFFL_SUM, nullptr);
  });
  assert_int_equal(outcomes[0].status, XFFL_EPEER);
  assert_contains(outcomes[0].message, "rank 0: a peer failed in world group while waiting for allreduce of 1 i32");
  assert_contains(outcomes[0].message, "remote process exited");
  assert_int_equal(fake->count("abort", 0), 1);
}

void peer_that_never_joins_times_out_in_init(void **) {
  auto fake = std::make_shared<FakeNccl>(1);
  auto outcomes = harness::run_ranks(fake, 2, kShortTimeoutMs, [&](int rank, NcclBackend &backend) {
    if (rank == 1) return;  // fetched the id, never initialises
    backend.register_world(world_of(rank, 2));
    backend.create_communicator(world_of(rank, 2));
  });
  assert_int_equal(outcomes[0].status, XFFL_ETIMEOUT);
  assert_contains(outcomes[0].message, "world communicator's initialisation (ncclCommInitRankConfig, 2 ranks)");
  assert_int_equal(fake->count("abort", 0), 1);
}

void a_split_without_the_others_times_out(void **) {
  auto fake = std::make_shared<FakeNccl>(1);
  auto outcomes = harness::run_ranks(fake, 2, kShortTimeoutMs, [&](int rank, NcclBackend &backend) {
    backend.register_world(world_of(rank, 2));
    auto world = backend.create_communicator(world_of(rank, 2));
    if (rank == 1) return;
    GroupSpec alone{topology::RankList::progression(0, 1, 1), 0, "federated group of rank 0", 9};
    backend.prepare_family(alone, 0);
  });
  assert_int_equal(outcomes[0].status, XFFL_ETIMEOUT);
  assert_contains(outcomes[0].message, "rank 0: timed out after 200 ms in federated group of rank 0");
  assert_contains(outcomes[0].message, "ncclCommSplit");
}

void destroying_a_healthy_communicator_finalizes_it(void **) {
  auto fake = std::make_shared<FakeNccl>(1);
  auto outcomes = harness::run_ranks(fake, 2, 20000, [&](int rank, NcclBackend &backend) {
    backend.register_world(world_of(rank, 2));
    backend.create_communicator(world_of(rank, 2))->barrier();
  });
  assert_all_ok(outcomes);
  assert_int_equal(fake->count("abort", 0) + fake->count("abort", 1), 0);
  assert_int_equal(fake->count("destroy", 0) + fake->count("destroy", 1), 2);
}

// After ncclCommAbort the communicator is gone (NCCL freed it): waiting on a stream that another
// communicator keeps busy must not poll the aborted one; it reports the recorded failure instead.
void an_aborted_communicator_is_never_polled_again(void **) {
  auto fake = std::make_shared<FakeNccl>(1);
  harness::Outcome later;
  auto outcomes = harness::run_ranks(fake, 2, kShortTimeoutMs, [&](int rank, NcclBackend &backend) {
    backend.set_stream_ordered(true);
    backend.register_world(world_of(rank, 2));
    auto world = backend.create_communicator(world_of(rank, 2));
    const GroupIdentity identity = backend.claim_group({0, 1}, 0);
    GroupSpec pair{topology::RankList::progression(0, 1, 2), rank, "pair", (1ull << 19) + identity.slot};
    pair.serial = identity.serial;
    auto other = backend.create_communicator(pair);
    if (rank == 1) return;  // takes part in nothing from here on
    void *stream = backend.stream(0);
    int x = 1;
    other->allreduce(&x, &x, 1, XFFL_I32, XFFL_SUM, stream);  // enqueued; pending forever on `stream`
    try {
      world->barrier();  // always waited for: times out and aborts the world communicator
    } catch (const Error &) {
    }
    try {
      static_cast<nccl::NcclCommunicator &>(*world).synchronize(stream);
    } catch (const Error &error) {
      later = harness::Outcome{error.status(), error.what()};
    }
  });
  assert_all_ok(outcomes);  // includes: no call on the freed communicator
  assert_int_equal(later.status, XFFL_ETIMEOUT);
  assert_contains(later.message, "was aborted earlier");
}

// XFFL_OPT_ENQUEUE_ONLY as the state applies it (Backend::apply of live_settings): with 1 a collective whose peer never
// comes returns once enqueued, as NCCL's do; with 0 (the default) the same call waits and times out.
void enqueue_only_returns_before_the_peer_arrives(void **) {
  auto fake = std::make_shared<FakeNccl>(1);
  std::vector<xffl_status_t> seen(2, XFFL_OK);
  auto outcomes = harness::run_ranks(fake, 2, kShortTimeoutMs, [&](int rank, NcclBackend &backend) {
    backend.register_world(world_of(rank, 2));
    auto group = backend.create_communicator(world_of(rank, 2));
    if (rank == 1) return;  // never calls a collective
    for (int enqueue_only = 1; enqueue_only >= 0; --enqueue_only) {
      Options options;
      options.timeout_ms = kShortTimeoutMs;
      options.enqueue_only = enqueue_only == 1;
      backend.apply(live_settings(options));
      int x = 1;
      try {
        group->allreduce(&x, &x, 1, XFFL_I32, XFFL_SUM, nullptr);
      } catch (const Error &error) {
        seen[static_cast<size_t>(enqueue_only)] = error.status();
      }
    }
  });
  assert_all_ok(outcomes);
  assert_int_equal(seen[1], XFFL_OK);        // enqueued, returned
  assert_int_equal(seen[0], XFFL_ETIMEOUT);  // waited on the host, bounded
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(peer_that_never_finishes_times_out_after_abort),
      cmocka_unit_test(async_error_is_a_peer_failure),
      cmocka_unit_test(peer_that_never_joins_times_out_in_init),
      cmocka_unit_test(a_split_without_the_others_times_out),
      cmocka_unit_test(destroying_a_healthy_communicator_finalizes_it),
      cmocka_unit_test(an_aborted_communicator_is_never_polled_again),
      cmocka_unit_test(enqueue_only_returns_before_the_peer_arrives),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
