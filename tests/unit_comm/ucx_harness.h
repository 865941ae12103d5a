// Threads as ranks for the UCX backend tests: an in-memory Exchange shared by all threads, one
// UcxBackend per thread, errors collected per rank (cmocka may only fail on the main thread).
#ifndef XFFL_TESTS_UNIT_COMM_UCX_HARNESS_H
#define XFFL_TESTS_UNIT_COMM_UCX_HARNESS_H

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "comm/communicator.h"
#include "comm/exchange.h"
#include "memory_exchange.h"
#include "comm/ucx/ucx_backend.h"
#include "common/error.h"

namespace harness {

using MemoryExchange = xffl_test::MemoryExchange;

// Counts down once per rank; wait() returns when all have arrived or after 30 s.
class Latch {
 public:
  explicit Latch(int count) : count_(count) {}
  void arrive() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (--count_ <= 0) zero_.notify_all();
  }
  void wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    zero_.wait_for(lock, std::chrono::seconds(30), [&] { return count_ <= 0; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable zero_;
  int count_;
};

// Ranks 0 .. n - 1.
inline std::vector<int> first_ranks(int n) {
  std::vector<int> ranks;
  for (int r = 0; r < n; ++r) ranks.push_back(r);
  return ranks;
}

inline std::unique_ptr<xffl::comm::Communicator> make_group(xffl::comm::Backend &backend, const std::vector<int> &members,
                                                             int my_rank, const std::string &description,
                                                             unsigned long long tag) {
  xffl::comm::GroupSpec spec;
  spec.members = xffl::topology::RankList::explicit_ranks(members);
  spec.my_index = spec.members.index_of(my_rank);
  spec.description = description;
  spec.tag = tag;
  return backend.create_communicator(spec);
}

struct Options {
  int timeout_ms = 20000;
  xffl::comm::algorithms::Tuning tuning;
};

using Body = std::function<void(int rank, int world, xffl::comm::UcxBackend &backend)>;

// Runs body on `world` threads, each with its own backend. Returns "rank R: message" of every rank
// that threw, joined by newlines ("" when all succeeded). Backends are destroyed on their threads.
inline std::string run_ranks(int world, const Body &body, const Options &options = Options()) {
  MemoryExchange exchange;
  std::vector<std::string> errors(static_cast<size_t>(world));
  std::vector<std::thread> threads;
  for (int rank = 0; rank < world; ++rank)
    threads.emplace_back([&, rank] {
      try {
        xffl::comm::UcxBackend backend(rank, world, exchange, options.timeout_ms, XFFL_LOG_ERROR);
        backend.set_tuning(options.tuning);
        body(rank, world, backend);
      } catch (const std::exception &error) {
        errors[static_cast<size_t>(rank)] = error.what();
      }
    });
  for (auto &thread : threads) thread.join();
  std::string all;
  for (int rank = 0; rank < world; ++rank)
    if (!errors[static_cast<size_t>(rank)].empty())
      all += "rank " + std::to_string(rank) + ": " + errors[static_cast<size_t>(rank)] + "\n";
  return all;
}

// Every rank of a group of all `world` ranks (tag) allreduces, f32 SUM in place, `count` random values
// of its own (seeded by its rank); returns each rank's result, for tests that every copy is the same
// bits. run_ranks' errors go to *errors.
inline std::vector<std::vector<float>> random_f32_sums(int world, size_t count, unsigned long long tag,
                                                       const Options &options, std::string *errors) {
  std::vector<std::vector<float>> results(static_cast<size_t>(world));
  const std::vector<int> members = first_ranks(world);
  *errors = run_ranks(world, [&](int rank, int n, xffl::comm::UcxBackend &backend) {
    (void)n;
    auto comm = make_group(backend, members, rank, "world group", tag);
    std::mt19937 random(static_cast<unsigned>(rank + 1));
    std::uniform_real_distribution<float> value(-1.0f, 1.0f);
    std::vector<float> data(count);
    for (float &x : data) x = value(random);
    comm->allreduce(data.data(), data.data(), data.size(), XFFL_F32, XFFL_SUM, nullptr);
    results[static_cast<size_t>(rank)] = data;
  }, options);
  return results;
}

// The same with NaNs: in 4 elements of 5, every rank holds a NaN of its own payload and sign (f32 bits),
// in the rest a number of its own; SUM out of place, each rank's output 4 bytes further than the
// previous rank's (other alignments), one call per count. Returns each rank's results, the counts one
// after the other, for tests that every copy holds the same bits, NaNs included.
inline std::vector<std::vector<uint32_t>> nan_f32_sums(int world, const std::vector<size_t> &counts,
                                                       unsigned long long tag, const Options &options,
                                                       std::string *errors) {
  std::vector<std::vector<uint32_t>> results(static_cast<size_t>(world));
  const std::vector<int> members = first_ranks(world);
  *errors = run_ranks(world, [&](int rank, int n, xffl::comm::UcxBackend &backend) {
    (void)n;
    auto comm = make_group(backend, members, rank, "world group", tag);
    std::vector<uint32_t> &mine = results[static_cast<size_t>(rank)];
    for (size_t count : counts) {
      std::vector<uint32_t> send(count), out(count + static_cast<size_t>(world));
      for (size_t i = 0; i < count; ++i) {
        const float number = 0.5f * static_cast<float>(rank + 1);
        std::memcpy(&send[i], &number, 4);
        const uint32_t payload = static_cast<uint32_t>(rank + 1) * 0x1357u + static_cast<uint32_t>(i);
        if (i % 5 != 4) send[i] = ((rank + i) % 2 ? 0xFF800000u : 0x7F800000u) | (payload & 0x7FFFFFu) | 1u;
      }
      uint32_t *recv = out.data() + rank;
      comm->allreduce(send.data(), recv, count, XFFL_F32, XFFL_SUM, nullptr);
      mine.insert(mine.end(), recv, recv + count);
    }
  }, options);
  return results;
}

}  // namespace harness

#endif
