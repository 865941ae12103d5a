// Threads as ranks for the NCCL backend's unit tests: one FakeNccl shared by all, an in-memory
// Exchange, one NcclBackend per thread; failures are collected per rank (cmocka may only fail on
// the main thread) and every wait is bounded.
#ifndef XFFL_TESTS_UNIT_NCCL_NCCL_HARNESS_H
#define XFFL_TESTS_UNIT_NCCL_NCCL_HARNESS_H

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "comm/exchange.h"
#include "memory_exchange.h"
#include "comm/nccl/nccl_backend.h"
#include "common/error.h"
#include "fake_nccl.h"

namespace harness {

using MemoryExchange = xffl_test::MemoryExchange;

// What one thread-rank saw: OK, or the status and message of the xffl::Error it threw.
struct Outcome {
  xffl_status_t status = XFFL_OK;
  std::string message;
};

// Runs body(rank, backend) on `world` threads, each with its own NcclBackend over the shared fake.
inline std::vector<Outcome> run_ranks(const std::shared_ptr<xffl::test::FakeNccl> &fake, int world, int timeout_ms,
                                      const std::function<void(int, xffl::comm::NcclBackend &)> &body) {
  auto exchange = std::make_shared<MemoryExchange>();
  std::vector<Outcome> outcomes(static_cast<size_t>(world));
  std::vector<std::thread> threads;
  for (int rank = 0; rank < world; ++rank)
    threads.emplace_back([&, rank] {
      xffl::test::FakeNccl::bind_thread(rank);
      try {
        xffl::comm::NcclBackend backend(fake, exchange, rank, world, timeout_ms);
        body(rank, backend);
      } catch (const xffl::Error &error) {
        outcomes[static_cast<size_t>(rank)] = Outcome{error.status(), error.what()};
      } catch (const std::exception &error) {
        outcomes[static_cast<size_t>(rank)] = Outcome{XFFL_EINTERNAL, error.what()};
      }
    });
  for (auto &thread : threads) thread.join();
  // What real NCCL or CUDA would not have survived fails the rank that did it, whatever it returned.
  for (const auto &[rank, misuse] : fake->misuses())
    if (rank >= 0 && rank < world) {
      Outcome &outcome = outcomes[static_cast<size_t>(rank)];
      outcome.status = XFFL_EINTERNAL;
      outcome.message += (outcome.message.empty() ? "" : "; ") + std::string("misused NCCL: ") + misuse;
    }
  return outcomes;
}

inline std::string describe(const std::vector<Outcome> &outcomes) {
  std::string text;
  for (size_t r = 0; r < outcomes.size(); ++r)
    if (outcomes[r].status != XFFL_OK) text += "rank " + std::to_string(r) + ": " + outcomes[r].message + "\n";
  return text;
}

inline xffl::comm::GroupSpec spec_of(const xffl::topology::RankList &members, int rank, const std::string &what,
                                     unsigned long long tag) {
  return xffl::comm::GroupSpec{members, members.index_of(rank), what + " of rank " + std::to_string(rank), tag};
}

}  // namespace harness

// cmocka's headers must come first in the test files; these assert every rank succeeded.
#define assert_all_ok(outcomes)                                                 \
  do {                                                                          \
    const std::string failures_ = harness::describe(outcomes);                  \
    if (!failures_.empty()) fail_msg("%s", failures_.c_str());                  \
  } while (0)

#endif
