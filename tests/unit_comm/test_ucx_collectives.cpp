// The UCX backend with threads as ranks: every collective x dtype x op x placement on world sizes
// 1, 2, 3, 4 and 8 at counts 0, 1, odd and multi-chunk (small tuning so both algorithms of each
// collective run), a few MiB with the default tuning, and random floats bit-identical on all ranks
// (NaN payloads too, over UCX messages as across hosts).
#include <cstdint>
#include <random>

#include "collective_checks.h"
#include "comm/algorithm_choice.h"
#include "comm/algorithms/collectives.h"
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

harness::Options small_chunks() {
  harness::Options options;
  options.tuning.chunk_bytes = 2048;
  options.tuning.window = 4;
  options.tuning.small_allreduce_bytes = 1024;
  options.tuning.small_broadcast_bytes = 1024;
  return options;
}

void expect_ok(const std::string &errors) {
  if (!errors.empty()) fail_msg("%s", errors.c_str());
}

void world_matrix(int world) {
  expect_ok(harness::run_ranks(world, [](int rank, int n, xffl::comm::UcxBackend &backend) {
    std::vector<int> everyone;
    for (int r = 0; r < n; ++r) everyone.push_back(r);
    auto world_comm = harness::make_group(backend, everyone, rank, "world group", 1);
    checks::full_matrix(*world_comm, rank, n, {0, 1, 7, 1001});
  }, small_chunks()));
}

void every_collective_on_1_rank(void **) { world_matrix(1); }
void every_collective_on_2_ranks(void **) { world_matrix(2); }
void every_collective_on_3_ranks(void **) { world_matrix(3); }
void every_collective_on_4_ranks(void **) { world_matrix(4); }
void every_collective_on_8_ranks(void **) { world_matrix(8); }

void a_few_mib_with_the_default_tuning(void **) {
  for (int world : {2, 3}) {
    expect_ok(harness::run_ranks(world, [](int rank, int n, xffl::comm::UcxBackend &backend) {
      auto comm = harness::make_group(backend, n == 2 ? std::vector<int>{0, 1} : std::vector<int>{0, 1, 2}, rank,
                                      "world group", 7);
      const size_t mib = size_t{1} << 20;
      checks::allreduce(*comm, rank, n, 3 * mib / 4 + 5, XFFL_F32, XFFL_SUM, false);
      checks::allreduce(*comm, rank, n, 3 * mib / 4 + 5, XFFL_F32, XFFL_AVG, true);
      checks::allreduce(*comm, rank, n, mib + 3, XFFL_BF16, XFFL_AVG, true);
      checks::allreduce(*comm, rank, n, 2 * mib + 1, XFFL_I8, XFFL_AVG, false);
      checks::reduce_scatter(*comm, rank, n, mib / 2 + 1, XFFL_F64, XFFL_MAX, true);
      checks::allgather(*comm, rank, n, mib / 2 + 3, XFFL_I32, false);
      checks::broadcast(*comm, rank, 3 * mib + 1, XFFL_U8, n - 1);
    }));
  }
}

void random_floats_are_bit_identical_on_every_rank(void **) {
  const int world = 5;
  std::vector<std::vector<float>> results(world);
  std::vector<std::vector<uint16_t>> halves(world);
  expect_ok(harness::run_ranks(world, [&](int rank, int n, xffl::comm::UcxBackend &backend) {
    auto comm = harness::make_group(backend, {0, 1, 2, 3, 4}, rank, "world group", 3);
    std::mt19937 random(static_cast<unsigned>(rank + 1));
    std::uniform_real_distribution<float> value(-1.0f, 1.0f);
    std::vector<float> data(100003);
    for (float &x : data) x = value(random);
    std::vector<uint16_t> half(data.size());
    xffl::comm::f32_to_bf16(data.data(), half.data(), data.size());
    comm->allreduce(data.data(), data.data(), data.size(), XFFL_F32, XFFL_SUM, nullptr);
    comm->allreduce(half.data(), half.data(), 37, XFFL_BF16, XFFL_AVG, nullptr);  // recursive doubling
    comm->allreduce(half.data() + 37, half.data() + 37, half.size() - 37, XFFL_BF16, XFFL_AVG, nullptr);
    results[static_cast<size_t>(rank)] = data;
    halves[static_cast<size_t>(rank)] = half;
    (void)n;
  }, small_chunks()));
  for (int r = 1; r < world; ++r) {
    assert_true(results[static_cast<size_t>(r)] == results[0]);
    assert_true(halves[static_cast<size_t>(r)] == halves[0]);
  }
}

// NaNs with a distinct payload on every rank in the same elements (harness::nan_f32_sums): the result
// holds the same bits on every rank, NaNs included, on the path across hosts (UCX messages: recursive
// doubling at 1001 f32, the ring or halving-doubling at 100003), on 2, 4 and 5 ranks (5: a folded pair).
// A replica that differs only in a NaN's payload still differs.
void nan_payloads_are_bit_identical_on_every_rank(void **) {
  harness::Options across_hosts;
  across_hosts.tuning.single_copy_on_host = xffl::comm::algorithms::SingleCopy::never;
  for (bool halving : {false, true}) {
    across_hosts.tuning.halving_allreduce_bytes = halving ? SIZE_MAX : 0;
    for (int world : {2, 4, 5}) {
      std::string errors;
      const auto results = harness::nan_f32_sums(world, {1001, 100003}, 4, across_hosts, &errors);
      expect_ok(errors);
      for (int r = 1; r < world; ++r)
        if (results[static_cast<size_t>(r)] != results[0])
          fail_msg("%d ranks%s: rank %d holds other bits than rank 0", world, halving ? ", halving-doubling" : "", r);
    }
  }
}

// The middle sizes across hosts (UCX messages) with the default tuning, which takes halving-doubling
// there (algorithm_choice.h): 4 ranks (a power of two) and 6 (two folded pairs), widened dtypes and
// not, in place and not, counts that do not divide by the members, the largest size of the range.
void middle_sizes_across_hosts(void **) {
  harness::Options across_hosts;
  across_hosts.tuning.single_copy_on_host = xffl::comm::algorithms::SingleCopy::never;
  for (int world : {4, 6}) {
    const size_t kib = 1024, largest = xffl::comm::algorithm_choice::halving_allreduce_bytes(world);
    struct Case {
      size_t count;
      xffl_dtype_t dtype;
      xffl_redop_t op;
      bool in_place;
    };
    const Case cases[] = {{largest / 4, XFFL_F32, XFFL_SUM, false},
                          {largest / 8 - 3, XFFL_F64, XFFL_MAX, true},
                          {100 * kib + 1, XFFL_BF16, XFFL_AVG, true},
                          {200 * kib + 7, XFFL_I8, XFFL_AVG, false},
                          {40 * kib + 5, XFFL_I32, XFFL_MIN, false}};
    for (const Case &c : cases)
      if (xffl::comm::algorithms::allreduce_schedule(c.count, c.dtype, world, across_hosts.tuning) !=
          xffl::comm::algorithms::AllreduceSchedule::halving_doubling)
        fail_msg("%d ranks: %zu %s take another schedule than halving-doubling", world, c.count, checks::dtype_name(c.dtype));
    expect_ok(harness::run_ranks(world, [&](int rank, int n, xffl::comm::UcxBackend &backend) {
      auto comm = harness::make_group(backend, harness::first_ranks(n), rank, "world group", 9);
      for (const Case &c : cases) checks::allreduce(*comm, rank, n, c.count, c.dtype, c.op, c.in_place);
    }, across_hosts));
  }
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_collective_on_1_rank),
      cmocka_unit_test(every_collective_on_2_ranks),
      cmocka_unit_test(every_collective_on_3_ranks),
      cmocka_unit_test(every_collective_on_4_ranks),
      cmocka_unit_test(every_collective_on_8_ranks),
      cmocka_unit_test(a_few_mib_with_the_default_tuning),
      cmocka_unit_test(random_floats_are_bit_identical_on_every_rank),
      cmocka_unit_test(nan_payloads_are_bit_identical_on_every_rank),
      cmocka_unit_test(middle_sizes_across_hosts),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
