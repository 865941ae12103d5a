// The single-copy collectives of members on one host (comm/algorithms/single_copy.h), with threads
// as ranks (their reads are process_vm_readv of their own process; the multiproc and faults tests run
// them across processes): every collective, dtype, op and placement at uneven counts above the crossover
// of comm/algorithm_choice.h, several chunks per segment, bit-identical floats on every rank, and a
// group with a member "on another host" (its published host rewritten), which keeps the UCX messages
// while a group of the others reads directly. And broadcast_produced (the compressed WAN hop's relay),
// whose root writes each window just before it leaves: read directly, down the chain and by the tree.
#include <algorithm>
#include <limits>
#include <memory>
#include <random>
#include <thread>

#include "collective_checks.h"
#include "comm/algorithm_choice.h"
#include "comm/ucx/ucx_address.h"
#include "comm/ucx/ucx_communicator.h"
#include "ucx_harness.h"

// cmocka last: its fail() macro would rewrite xffl::fail in the headers above.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

namespace {

using xffl::comm::ucx::UcxCommunicator;

void expect_ok(const std::string &errors) {
  if (!errors.empty()) fail_msg("%s", errors.c_str());
}

bool shares_host(xffl::comm::Communicator &comm) {
  auto *ucx = dynamic_cast<UcxCommunicator *>(&comm);
  return ucx && ucx->members_share_host();
}

// Uneven on 2, 3 and 4 ranks; counts 1 and 2 leave members with empty segments.
const std::vector<size_t> kCounts = {1, 2, 2011};

// Single copy at every size: the crossovers of algorithm_choice.h would send small buffers over UCX.
harness::Options always_single_copy() {
  harness::Options options;
  options.tuning.single_copy_on_host = xffl::comm::algorithms::SingleCopy::always;
  return options;
}

void every_collective_reads_directly(int world) {
  expect_ok(harness::run_ranks(world, [](int rank, int n, xffl::comm::UcxBackend &backend) {
    auto comm = harness::make_group(backend, harness::first_ranks(n), rank, "world group", 1);
    if (!shares_host(*comm)) (xffl::fail)(XFFL_EINTERNAL, "threads of one process do not share a host");
    checks::full_matrix(*comm, rank, n, kCounts);
  }, always_single_copy()));
}

void every_collective_on_2_ranks(void **) { every_collective_reads_directly(2); }
void every_collective_on_3_ranks(void **) { every_collective_reads_directly(3); }
void every_collective_on_4_ranks(void **) { every_collective_reads_directly(4); }

// Segments of several read chunks (algorithm_choice::single_copy_chunk_bytes), widened types.
void segments_of_several_chunks(void **) {
  expect_ok(harness::run_ranks(3, [](int rank, int n, xffl::comm::UcxBackend &backend) {
    auto comm = harness::make_group(backend, harness::first_ranks(n), rank, "world group", 2);
    checks::allreduce(*comm, rank, n, 300007, XFFL_F32, XFFL_SUM, false);
    checks::allreduce(*comm, rank, n, 300007, XFFL_BF16, XFFL_AVG, true);
    checks::allreduce(*comm, rank, n, 200003, XFFL_I32, XFFL_AVG, true);
    checks::reduce_scatter(*comm, rank, n, 100003, XFFL_F64, XFFL_MIN, true);
    checks::allgather(*comm, rank, n, 100003, XFFL_I64, true);
    checks::broadcast(*comm, rank, 400001, XFFL_U8, 1);
  }, always_single_copy()));
}

void random_floats_are_bit_identical_on_every_rank(void **) {
  std::string errors;
  const auto results = harness::random_f32_sums(3, 100003, 3, always_single_copy(), &errors);
  expect_ok(errors);
  for (size_t r = 1; r < results.size(); ++r) assert_true(results[r] == results[0]);
}

// The job's store as the ranks in `elsewhere` would fill it from another machine: their published
// host differs, everything else is the same.
class OtherHostExchange final : public xffl::comm::Exchange {
 public:
  explicit OtherHostExchange(std::vector<int> elsewhere) : elsewhere_(std::move(elsewhere)) {}
  void publish(const std::string &key, const std::vector<uint8_t> &value) override {
    for (int rank : elsewhere_)
      if (key == xffl::comm::ucx::address_key(rank)) {
        const xffl::comm::ucx::PublishedAddress decoded = xffl::comm::ucx::decode_address(value);
        return inner_.publish(key, xffl::comm::ucx::encode_address("another host", decoded.process,
                                                                   decoded.worker_address.data(),
                                                                   decoded.worker_address.size()));
      }
    inner_.publish(key, value);
  }
  std::vector<uint8_t> fetch(const std::string &key, int timeout_ms) override { return inner_.fetch(key, timeout_ms); }
  xffl::comm::GroupIdentity claim_group(const std::vector<int> &members, uint32_t creation, int timeout_ms) override {
    return inner_.claim_group(members, creation, timeout_ms);
  }
  void release_group(uint32_t slot) noexcept override { inner_.release_group(slot); }

 private:
  std::vector<int> elsewhere_;
  xffl_test::MemoryExchange inner_;
};

void a_group_across_hosts_keeps_the_messages(void **) {
  const int world = 4;
  OtherHostExchange exchange({3});
  std::vector<std::string> errors(world);
  std::vector<std::vector<float>> results(world);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < world; ++rank)
    threads.emplace_back([&, rank] {
      try {
        xffl::comm::UcxBackend backend(rank, world, exchange, 20000, XFFL_LOG_ERROR);
        // Every endpoint with failure reports, as between hosts: UCX needs both ends configured alike,
        // and rank 3 takes the others for neighbours while they take it for a remote rank.
        backend.set_peer_failure_detection_on_host(true);
        backend.set_tuning(always_single_copy().tuning);
        auto everyone = harness::make_group(backend, harness::first_ranks(world), rank, "world group", 4);
        if (shares_host(*everyone)) (xffl::fail)(XFFL_EINTERNAL, "a group with rank 3 on another host shares one");
        checks::full_matrix(*everyone, rank, world, kCounts);
        std::vector<float> data(70001, 0.1f * static_cast<float>(rank + 1));
        everyone->allreduce(data.data(), data.data(), data.size(), XFFL_F32, XFFL_AVG, nullptr);
        results[static_cast<size_t>(rank)] = data;
        if (rank < 3) {
          auto local = harness::make_group(backend, {0, 1, 2}, rank, "local group", 5);
          if (!shares_host(*local)) (xffl::fail)(XFFL_EINTERNAL, "ranks 0, 1 and 2 do not share a host");
          checks::full_matrix(*local, rank, 3, kCounts);
        }
        everyone->barrier();
      } catch (const std::exception &error) {
        errors[static_cast<size_t>(rank)] = error.what();
      }
    });
  for (auto &thread : threads) thread.join();
  std::string all;
  for (int rank = 0; rank < world; ++rank)
    if (!errors[static_cast<size_t>(rank)].empty())
      all += "rank " + std::to_string(rank) + ": " + errors[static_cast<size_t>(rank)] + "\n";
  expect_ok(all);
  for (int r = 1; r < world; ++r) assert_true(results[static_cast<size_t>(r)] == results[0]);
}

// broadcast_produced on 3 ranks from index 1, 70001 f32 in windows of 4096 (the last one shorter): the
// root's buffer holds garbage until produce writes a window, so every member holds produce's values only
// if each window left after it was produced; produce is called once per window, in order. pipelined
// (when 0 or 1): whether the call must have taken the shared segment's pipelined rounds.
void produced_broadcast_on(const xffl::comm::algorithms::Tuning &tuning, size_t count, int pipelined = -1) {
  harness::Options options;
  options.tuning = tuning;
  const size_t window = 4096;
  expect_ok(harness::run_ranks(3, [&](int rank, int n, xffl::comm::UcxBackend &backend) {
    auto comm = harness::make_group(backend, harness::first_ranks(n), rank, "world group", 6);
    const int root = 1;
    auto value = [](size_t i) { return static_cast<float>(i % 1013) * 0.25f - 7.0f; };
    std::vector<float> data(count, std::numeric_limits<float>::quiet_NaN());
    size_t next = 0;
    xffl::comm::Communicator::Produce produce = [&](size_t first, size_t n_values) {
      if (first != next || n_values != std::min(window, count - first))
        (xffl::fail)(XFFL_EINTERNAL, "produce(", first, ", ", n_values, ") where window ", next, " was due");
      for (size_t i = first; i < first + n_values; ++i) data[i] = value(i);
      next = first + n_values;
    };
    auto *ucx = dynamic_cast<xffl::comm::ucx::UcxCommunicator *>(comm.get());
    const uint64_t rounds_before = ucx ? ucx->host_pipelined_calls() : 0;
    comm->broadcast_produced(data.data(), count, XFFL_F32, root, window,
                             rank == root ? produce : xffl::comm::Communicator::Produce(), nullptr);
    const bool took = ucx && ucx->host_pipelined_calls() != rounds_before;
    if (pipelined >= 0 && took != (pipelined == 1))
      (xffl::fail)(XFFL_EINTERNAL, "broadcast_produced of ", count, " f32", took ? " took" : " did not take",
                   " the pipelined rounds");
    if (rank == root && next != count) (xffl::fail)(XFFL_EINTERNAL, "produced ", next, " of ", count, " values");
    for (size_t i = 0; i < count; ++i)
      if (data[i] != value(i)) (xffl::fail)(XFFL_EINTERNAL, "value ", i, " of ", count, " is ", data[i]);
    comm->barrier();
  }, options));
}

void produced_broadcast_reads_each_window_once_produced(void **) {
  produced_broadcast_on(always_single_copy().tuning, 70001);
}

// With the sizes of algorithm_choice.h (members on one host): below the rounds' crossover the shared
// segment's slots (every window produced first), from it the pipelined rounds, each part produced just
// before the root stages it.
void produced_broadcast_through_the_segment(void **) {
  const xffl::comm::algorithms::Tuning by_size;
  produced_broadcast_on(by_size, 70001, 0);
  produced_broadcast_on(by_size, xffl::comm::algorithm_choice::host_pipeline_broadcast_from(3) / sizeof(float) * 2 + 4097,
                        1);
}

void produced_broadcast_sends_each_window_once_produced(void **) {
  xffl::comm::algorithms::Tuning messages;
  messages.single_copy_on_host = xffl::comm::algorithms::SingleCopy::never;
  messages.chunk_bytes = 6000;  // windows and chunks that do not line up
  messages.small_broadcast_bytes = 1024;
  produced_broadcast_on(messages, 70001);  // down the chain
  produced_broadcast_on(messages, 200);    // the binomial tree: every window first
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_collective_on_2_ranks),
      cmocka_unit_test(every_collective_on_3_ranks),
      cmocka_unit_test(every_collective_on_4_ranks),
      cmocka_unit_test(segments_of_several_chunks),
      cmocka_unit_test(random_floats_are_bit_identical_on_every_rank),
      cmocka_unit_test(a_group_across_hosts_keeps_the_messages),
      cmocka_unit_test(produced_broadcast_reads_each_window_once_produced),
      cmocka_unit_test(produced_broadcast_sends_each_window_once_produced),
      cmocka_unit_test(produced_broadcast_through_the_segment),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
