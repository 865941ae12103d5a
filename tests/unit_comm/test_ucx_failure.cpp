// Failures on the UCX backend with a 1 s timeout: a rank that never joins makes the others fail
// with XFFL_ETIMEOUT naming it, the collective, the group and the step; the communicator then fails
// at once with the same message; a rank whose backend is destroyed gives XFFL_ETIMEOUT or XFFL_EPEER
// naming it; destroying everything afterwards works.
#include <mutex>

#include "ucx_harness.h"

// cmocka last: its fail() macro would rewrite xffl::fail in the headers above. It has no
// extern "C" of its own.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

namespace {

struct Outcome {
  xffl_status_t status = XFFL_OK;
  std::string message;
  xffl_status_t again_status = XFFL_OK;
  std::string again_message;
};

harness::Options short_timeout() {
  harness::Options options;
  options.timeout_ms = 1000;
  return options;
}

template <typename Call>
void record(Outcome &outcome, Call &&call) {
  try {
    call();
  } catch (const xffl::Error &error) {
    outcome.status = error.status();
    outcome.message = error.what();
  }
  try {
    call();
  } catch (const xffl::Error &error) {
    outcome.again_status = error.status();
    outcome.again_message = error.what();
  }
}

void expect_contains(const std::string &text, const std::string &part) {
  if (text.find(part) == std::string::npos) fail_msg("\"%s\" does not contain \"%s\"", text.c_str(), part.c_str());
}

void a_rank_that_never_joins_times_out_the_others(void **) {
  std::vector<Outcome> outcomes(3);
  harness::Latch done(2);
  const std::string errors = harness::run_ranks(3, [&](int rank, int, xffl::comm::UcxBackend &backend) {
    auto group = harness::make_group(backend, {0, 1, 2}, rank, "federated group (instance 0)", 5);
    if (rank == 2) {
      done.wait();  // stays away until the others have given up
      return;
    }
    record(outcomes[static_cast<size_t>(rank)], [&] { group->barrier(); });
    done.arrive();
  }, short_timeout());
  if (!errors.empty()) fail_msg("%s", errors.c_str());
  for (int rank : {0, 1}) {
    const Outcome &o = outcomes[static_cast<size_t>(rank)];
    assert_int_equal(o.status, XFFL_ETIMEOUT);
    expect_contains(o.message, "rank " + std::to_string(rank) + ": timed out after 1000 ms in barrier on "
                               "federated group (instance 0) waiting for rank 2 (step ");
    assert_int_equal(o.again_status, XFFL_ETIMEOUT);
    assert_string_equal(o.again_message.c_str(), o.message.c_str());
  }
}

void a_missing_rank_in_a_large_allreduce_is_named(void **) {
  Outcome outcome;
  harness::Latch done(1);
  std::vector<float> data(1 << 20, 1.0f);  // ring with rendezvous-sized messages
  const std::string errors = harness::run_ranks(2, [&](int rank, int, xffl::comm::UcxBackend &backend) {
    auto group = harness::make_group(backend, {1, 0}, rank, "replica group", 6);
    if (rank == 0) {
      done.wait();
      return;
    }
    record(outcome, [&] { group->allreduce(data.data(), data.data(), data.size(), XFFL_F32, XFFL_SUM, nullptr); });
    done.arrive();
  }, short_timeout());
  if (!errors.empty()) fail_msg("%s", errors.c_str());
  assert_int_equal(outcome.status, XFFL_ETIMEOUT);
  expect_contains(outcome.message, "rank 1: timed out after 1000 ms in allreduce on replica group waiting for rank 0");
  assert_string_equal(outcome.again_message.c_str(), outcome.message.c_str());
}

void a_destroyed_peer_is_named(void **) {
  Outcome outcome;
  harness::Latch connected(2);
  const std::string errors = harness::run_ranks(2, [&](int rank, int, xffl::comm::UcxBackend &backend) {
    auto group = harness::make_group(backend, {0, 1}, rank, "world group", 1);
    group->barrier();  // both have endpoints now
    connected.arrive();
    connected.wait();
    if (rank == 1) return;  // its backend is destroyed while rank 0 waits for it
    record(outcome, [&] { group->allreduce(nullptr, nullptr, 0, XFFL_F32, XFFL_SUM, nullptr); group->barrier(); });
  }, short_timeout());
  if (!errors.empty()) fail_msg("%s", errors.c_str());
  assert_true(outcome.status == XFFL_ETIMEOUT || outcome.status == XFFL_EPEER);
  expect_contains(outcome.message, "rank 1");
  expect_contains(outcome.message, "barrier on world group");
}

void a_missing_address_times_out_naming_the_rank(void **) {
  // World of 3 where rank 2 never starts: its address is never published.
  harness::MemoryExchange exchange;
  std::vector<Outcome> outcomes(2);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < 2; ++rank)
    threads.emplace_back([&, rank] {
      try {
        xffl::comm::UcxBackend backend(rank, 3, exchange, 1000, XFFL_LOG_ERROR);
        auto group = harness::make_group(backend, {0, 1, 2}, rank, "world group", 1);
        record(outcomes[static_cast<size_t>(rank)], [&] { group->barrier(); });
      } catch (const std::exception &error) {
        outcomes[static_cast<size_t>(rank)].message = std::string("backend: ") + error.what();
      }
    });
  for (auto &thread : threads) thread.join();
  for (const Outcome &o : outcomes) {
    assert_int_equal(o.status, XFFL_ETIMEOUT);
    expect_contains(o.message, "rank 2");
    expect_contains(o.message, "barrier on world group");
  }
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_rank_that_never_joins_times_out_the_others),
      cmocka_unit_test(a_missing_rank_in_a_large_allreduce_is_named),
      cmocka_unit_test(a_destroyed_peer_is_named),
      cmocka_unit_test(a_missing_address_times_out_naming_the_rank),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
