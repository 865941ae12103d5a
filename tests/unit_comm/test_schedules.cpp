// The collective schedules on the fake transport (no UCX): results against locally computed
// references, bit-identical on every member, and the shape of each schedule (steps, messages,
// bytes, largest message) for 1 to 9 members.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <utility>
#include <vector>

#include "comm/algorithms/chunks.h"
#include "comm/algorithms/collectives.h"
#include "comm/algorithms/folding.h"
#include "comm/algorithms/schedules.h"
#include "fake_transport.h"
#include "reference.h"

// cmocka last: its fail() macro would rewrite xffl::fail in the headers above. It has no
// extern "C" of its own.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

using namespace xffl::comm;
using algorithms::Tuning;

namespace {

const xffl_dtype_t kDtypes[] = {XFFL_F32, XFFL_F64, XFFL_F16, XFFL_BF16, XFFL_I8, XFFL_U8, XFFL_I32, XFFL_I64};
const xffl_redop_t kOps[] = {XFFL_SUM, XFFL_AVG, XFFL_MIN, XFFL_MAX, XFFL_PROD};

Tuning tiny_tuning() {
  Tuning tuning;
  tuning.chunk_bytes = 64;  // many chunks and a full window even for small buffers
  tuning.window = 3;
  tuning.small_allreduce_bytes = 256;
  tuning.halving_allreduce_bytes = 0;  // the ring past 256 bytes; halving_doubling() for the other
  tuning.small_broadcast_bytes = 256;
  return tuning;
}

// `tuning` with halving-doubling in place of the ring past small_allreduce_bytes, for any member count.
Tuning halving_doubling(Tuning tuning) {
  tuning.halving_allreduce_bytes = SIZE_MAX;
  return tuning;
}

// The (dtype, op) pairs each schedule runs with. The schedules move bytes in element-sized steps and
// call one kernel per step, so past the element size they do not depend on the pair. The ci build
// runs every pair; sanitized builds (XFFL_TEST_SANITIZED: the thread creation of about 1900 runs of up to
// 8 thread-ranks took 65-120 s under ASan and TSan) run each dtype once and each op at least once, the
// k-th dtype with the k-th op (mod the ops), and every pair once on 3 members through the small path and
// the ring (allreduce_matches_reference_for_every_dtype_op_and_size), so every kernel still runs there.
std::vector<std::pair<xffl_dtype_t, xffl_redop_t>> dtype_op_pairs() {
  std::vector<std::pair<xffl_dtype_t, xffl_redop_t>> pairs;
  const size_t dtypes = sizeof kDtypes / sizeof kDtypes[0], ops = sizeof kOps / sizeof kOps[0];
#ifdef XFFL_TEST_SANITIZED
  for (size_t d = 0; d < dtypes; ++d) pairs.emplace_back(kDtypes[d], kOps[d % ops]);
#else
  for (size_t d = 0; d < dtypes; ++d)
    for (size_t o = 0; o < ops; ++o) pairs.emplace_back(kDtypes[d], kOps[o]);
#endif
  return pairs;
}

// The same for the random floats of random_float_results_are_bit_identical_on_every_member and the NaNs
// of nan_payloads_are_the_same_bits_on_every_member: the four float dtypes with SUM, AVG, MIN and PROD
// (every pair in the ci build, the k-th with the k-th when sanitized).
std::vector<std::pair<xffl_dtype_t, xffl_redop_t>> float_dtype_op_pairs() {
  const xffl_dtype_t dtypes[] = {XFFL_F32, XFFL_F64, XFFL_F16, XFFL_BF16};
  const xffl_redop_t ops[] = {XFFL_SUM, XFFL_AVG, XFFL_MIN, XFFL_PROD};
  std::vector<std::pair<xffl_dtype_t, xffl_redop_t>> pairs;
  for (size_t d = 0; d < 4; ++d)
#ifdef XFFL_TEST_SANITIZED
    pairs.emplace_back(dtypes[d], ops[d]);
#else
    for (size_t o = 0; o < 4; ++o) pairs.emplace_back(dtypes[d], ops[o]);
#endif
  return pairs;
}

void expect_ok(const std::string &error) {
  if (!error.empty()) fail_msg("%s", error.c_str());
}

void check_allreduce(int n, size_t count, xffl_dtype_t dtype, xffl_redop_t op, bool in_place, const Tuning &tuning) {
  const size_t element = dtype_size(dtype);
  std::vector<reference::Bytes> results(static_cast<size_t>(n));
  expect_ok(fake::run_members(n, [&](fake::Transport &t) {
    reference::Bytes send = reference::make_input(t.index(), count, dtype, op);
    reference::Bytes &recv = results[static_cast<size_t>(t.index())];
    if (in_place) {
      recv = send;
      algorithms::allreduce(t, recv.data(), recv.data(), count, dtype, op, tuning);
    } else {
      recv.assign(count * element, 0xee);
      algorithms::allreduce(t, send.data(), recv.data(), count, dtype, op, tuning);
    }
  }));
  const reference::Bytes expected = reference::reduced(n, count, dtype, op);
  for (int m = 0; m < n; ++m)
    if (results[static_cast<size_t>(m)] != expected)
      fail_msg("allreduce n=%d count=%zu %s %s %s: member %d differs from the reference", n, count, dtype_name(dtype),
               redop_name(op), in_place ? "in place" : "out of place", m);
}

// Counts 0, 1 and 3 take recursive doubling, 301 (and 37 of 8-byte types) the ring, or halving-doubling.
void allreduce_matches_reference_for_every_dtype_op_and_size(void **) {
  for (const Tuning &tuning : {tiny_tuning(), halving_doubling(tiny_tuning())}) {
    for (int n : {1, 2, 3, 4, 5, 6, 8})
      for (const auto &[dtype, op] : dtype_op_pairs())
        for (size_t count : {size_t{0}, size_t{1}, size_t{3}, size_t{37}, size_t{301}})
          for (bool in_place : {false, true}) check_allreduce(n, count, dtype, op, in_place, tuning);
#ifdef XFFL_TEST_SANITIZED
    for (xffl_dtype_t dtype : kDtypes)
      for (xffl_redop_t op : kOps)
        for (size_t count : {size_t{3}, size_t{301}}) check_allreduce(3, count, dtype, op, false, tuning);
#endif
  }
}

void reduce_scatter_matches_reference(void **) {
  const Tuning tuning = tiny_tuning();
  for (int n : {1, 2, 3, 4, 7})
    for (const auto &[dtype, op] : dtype_op_pairs())
      for (size_t recv_count : {size_t{0}, size_t{1}, size_t{19}, size_t{100}})
        for (bool in_place : {false, true}) {
          const size_t element = dtype_size(dtype);
          std::vector<reference::Bytes> results(static_cast<size_t>(n));
          expect_ok(fake::run_members(n, [&](fake::Transport &t) {
            reference::Bytes send = reference::make_input(t.index(), recv_count * n, dtype, op);
            const size_t mine = static_cast<size_t>(t.index()) * recv_count * element;
            if (in_place) {
              algorithms::reduce_scatter(t, send.data(), send.data() + mine, recv_count, dtype, op, tuning);
              results[static_cast<size_t>(t.index())].assign(send.begin() + static_cast<long>(mine),
                                                             send.begin() + static_cast<long>(mine + recv_count * element));
            } else {
              reference::Bytes recv(recv_count * element, 0xee);
              algorithms::reduce_scatter(t, send.data(), recv.data(), recv_count, dtype, op, tuning);
              results[static_cast<size_t>(t.index())] = recv;
            }
          }));
          for (int m = 0; m < n; ++m)
            if (results[static_cast<size_t>(m)] != reference::reduced(n, recv_count, dtype, op, m * recv_count))
              fail_msg("reduce_scatter n=%d rc=%zu %s %s: member %d wrong", n, recv_count, dtype_name(dtype),
                       redop_name(op), m);
        }
}

void allgather_and_broadcast_deliver_every_block(void **) {
  const Tuning tuning = tiny_tuning();
  for (int n : {1, 2, 3, 5, 8})
    for (size_t count : {size_t{0}, size_t{1}, size_t{33}, size_t{500}})
      for (bool in_place : {false, true}) {
        std::vector<reference::Bytes> gathered(static_cast<size_t>(n));
        expect_ok(fake::run_members(n, [&](fake::Transport &t) {
          const reference::Bytes mine = reference::make_input(t.index(), count, XFFL_I32, XFFL_SUM);
          reference::Bytes &all = gathered[static_cast<size_t>(t.index())];
          all.assign(mine.size() * n, 0xee);
          unsigned char *my_block = all.data() + mine.size() * t.index();
          if (in_place && !mine.empty()) std::memcpy(my_block, mine.data(), mine.size());  // count 0: no data
          algorithms::allgather(t, in_place ? my_block : mine.data(), all.data(), count, XFFL_I32, tuning);
        }));
        reference::Bytes expected;
        for (int m = 0; m < n; ++m) {
          const reference::Bytes block = reference::make_input(m, count, XFFL_I32, XFFL_SUM);
          expected.insert(expected.end(), block.begin(), block.end());
        }
        for (int m = 0; m < n; ++m)
          if (gathered[static_cast<size_t>(m)] != expected) fail_msg("allgather n=%d count=%zu: member %d wrong", n, count, m);
      }

  for (int n : {1, 2, 3, 6, 8})
    for (int root = 0; root < n; ++root)
      for (size_t count : {size_t{0}, size_t{5}, size_t{64}, size_t{1000}}) {  // binomial and chain
        std::vector<reference::Bytes> buffers(static_cast<size_t>(n));
        expect_ok(fake::run_members(n, [&](fake::Transport &t) {
          reference::Bytes &buffer = buffers[static_cast<size_t>(t.index())];
          buffer = reference::make_input(t.index() == root ? 100 : t.index(), count, XFFL_F64, XFFL_SUM);
          algorithms::broadcast(t, buffer.data(), count, XFFL_F64, root, tuning);
        }));
        for (int m = 0; m < n; ++m)
          if (buffers[static_cast<size_t>(m)] != reference::make_input(100, count, XFFL_F64, XFFL_SUM))
            fail_msg("broadcast n=%d root=%d count=%zu: member %d wrong", n, root, count, m);
      }
}

// Random floats: sums depend on the order, so only the agreement of all members is exact.
// streamed_allgather: every window is produced once, in order, before any of its bytes leaves (the
// fake transport copies a send when it is posted, so a window produced late would arrive as the
// 0xee filler), and consumed once, in order, when that window of every block is final; the result is
// allgather's. On a ring of 2 with many chunks the first window is consumed before the last is
// produced: the coding overlaps the transfer.
// Sanitized builds (XFFL_TEST_SANITIZED: thread creation is what costs there) run a third of the
// cases: every member count but 5, a window shorter than a chunk, one of a chunk, one over the count.
void streamed_allgather_produces_before_sending_and_consumes_when_final(void **) {
  const Tuning tuning = tiny_tuning();  // 64-byte chunks: 16 values of I32
#ifdef XFFL_TEST_SANITIZED
  const std::vector<int> member_counts = {1, 2, 3};
  const std::vector<size_t> windows = {7, 16, 1000};
#else
  const std::vector<int> member_counts = {1, 2, 3, 5};
  const std::vector<size_t> windows = {1, 7, 16, 1000};
#endif
  for (int n : member_counts)
    for (size_t count : {size_t{0}, size_t{1}, size_t{33}, size_t{500}})
      for (size_t window : windows)
        for (bool in_place : {false, true}) {
          std::vector<reference::Bytes> gathered(static_cast<size_t>(n));
          std::vector<std::string> errors(static_cast<size_t>(n));
          std::vector<int> consumed_before_last_produced(static_cast<size_t>(n), 0);
          expect_ok(fake::run_members(n, [&](fake::Transport &t) {
            const size_t me = static_cast<size_t>(t.index());
            const size_t element = dtype_size(XFFL_I32);
            const reference::Bytes mine = reference::make_input(t.index(), count, XFFL_I32, XFFL_SUM);
            reference::Bytes &all = gathered[me];
            all.assign(mine.size() * static_cast<size_t>(n), 0xee);
            reference::Bytes apart(mine.size(), 0xee);
            unsigned char *send = in_place ? all.data() + mine.size() * me : apart.data();
            size_t produced = 0, consumed = 0;
            std::string &error = errors[me];
            const auto expect_window = [&](const char *what, size_t next, size_t first, size_t m) {
              const size_t want = count - next < window ? count - next : window;
              if (error.empty() && (first != next || m != want))
                error = std::string(what) + " [" + std::to_string(first) + ", +" + std::to_string(m) + ") where [" +
                        std::to_string(next) + ", +" + std::to_string(want) + ") was due";
            };
            algorithms::streamed_allgather(
                t, send, all.data(), count, XFFL_I32, window,
                [&](size_t first, size_t m) {
                  expect_window("produced", produced, first, m);
                  std::memcpy(send + first * element, mine.data() + first * element, m * element);
                  produced = first + m;
                },
                [&](size_t first, size_t m) {
                  expect_window("consumed", consumed, first, m);
                  if (first + m > produced && error.empty()) error = "consumed a window not produced yet";
                  for (int b = 0; b < n && error.empty(); ++b) {
                    const reference::Bytes block = reference::make_input(b, count, XFFL_I32, XFFL_SUM);
                    if (std::memcmp(all.data() + (static_cast<size_t>(b) * count + first) * element,
                                    block.data() + first * element, m * element) != 0)
                      error = "consumed [" + std::to_string(first) + ", +" + std::to_string(m) + ") of block " +
                              std::to_string(b) + " before it was final";
                  }
                  if (first == 0 && produced < count) consumed_before_last_produced[me] = 1;
                  consumed = first + m;
                },
                tuning);
            if (error.empty() && (produced != count || consumed != count))
              error = "produced " + std::to_string(produced) + " and consumed " + std::to_string(consumed) + " of " +
                      std::to_string(count);
          }));
          for (int m = 0; m < n; ++m)
            if (!errors[static_cast<size_t>(m)].empty())
              fail_msg("streamed_allgather n=%d count=%zu window=%zu in_place=%d: member %d %s", n, count, window,
                       in_place, m, errors[static_cast<size_t>(m)].c_str());
          reference::Bytes expected;
          for (int m = 0; m < n; ++m) {
            const reference::Bytes block = reference::make_input(m, count, XFFL_I32, XFFL_SUM);
            expected.insert(expected.end(), block.begin(), block.end());
          }
          for (int m = 0; m < n; ++m)
            if (gathered[static_cast<size_t>(m)] != expected)
              fail_msg("streamed_allgather n=%d count=%zu window=%zu: member %d wrong", n, count, window, m);
          if (n == 2 && count == 500 && window == 16)
            for (int m = 0; m < n; ++m)
              if (!consumed_before_last_produced[static_cast<size_t>(m)])
                fail_msg("streamed_allgather n=2 count=500: member %d produced every window before consuming one", m);
        }
}

void random_float_results_are_bit_identical_on_every_member(void **) {
  for (bool halving : {false, true})
  for (int n : {2, 3, 5, 6, 7, 8})
    for (size_t count : {size_t{13}, size_t{4099}})
      for (const auto &[dtype, op] : float_dtype_op_pairs()) {
        const size_t element = dtype_size(dtype);
        std::vector<reference::Bytes> results(static_cast<size_t>(n));
        expect_ok(fake::run_members(n, [&](fake::Transport &t) {
          std::mt19937 random(static_cast<unsigned>(t.index() * 31 + 7));
          std::uniform_real_distribution<float> value(-1.0f, 1.0f);
          reference::Bytes buffer(count * element);
          for (size_t i = 0; i < count; ++i) reference::store(buffer.data() + i * element, dtype, value(random));
          Tuning tuning;
          tuning.chunk_bytes = 512;
          tuning.small_allreduce_bytes = 1024;
          tuning.halving_allreduce_bytes = halving ? SIZE_MAX : 0;
          algorithms::allreduce(t, buffer.data(), buffer.data(), count, dtype, op, tuning);
          results[static_cast<size_t>(t.index())] = buffer;
        }));
        for (int m = 1; m < n; ++m)
          if (results[static_cast<size_t>(m)] != results[0])
            fail_msg("n=%d count=%zu %s %s%s: member %d differs from member 0", n, count, dtype_name(dtype),
                     redop_name(op), halving ? " halving-doubling" : "", m);
      }
}

// A NaN of `dtype` with this payload (never 0) and sign, written bit by bit (a conversion could drop
// the payload).
void store_nan(unsigned char *at, xffl_dtype_t dtype, uint32_t payload, bool negative) {
  switch (dtype) {
    case XFFL_F32: {
      const uint32_t bits = (negative ? 0x80000000u : 0u) | 0x7F800000u | (payload & 0x7FFFFFu) | 1u;
      std::memcpy(at, &bits, 4);
      return;
    }
    case XFFL_F64: {
      const uint64_t bits = (negative ? 0x8000000000000000ull : 0ull) | 0x7FF0000000000000ull |
                            (static_cast<uint64_t>(payload) << 20) | 1u;
      std::memcpy(at, &bits, 8);
      return;
    }
    case XFFL_F16:
    case XFFL_BF16: {
      const uint16_t exponent = dtype == XFFL_F16 ? 0x7C00u : 0x7F80u, mantissa = dtype == XFFL_F16 ? 0x3FFu : 0x7Fu;
      const uint16_t bits = static_cast<uint16_t>((negative ? 0x8000u : 0u) | exponent | (payload & mantissa) | 1u);
      std::memcpy(at, &bits, 2);
      return;
    }
    default: fail_msg("store_nan: %s has no NaN", dtype_name(dtype));
  }
}

// Where several members hold a NaN in one element, the result's bits (which NaN's payload it keeps)
// are the same on every member too: a replica differing only there still differs. Recursive doubling
// (13 elements) has both partners of a pair compute each element, the ring and halving-doubling (4099)
// one member; every
// float dtype, SUM, PROD, AVG and MIN; NaNs of distinct payloads and signs on every member, NaNs on one
// member, infinities of both signs (their sum a NaN made by the operation), and numbers
// (float_dtype_op_pairs: every float dtype with SUM, AVG, MIN and PROD).
void nan_payloads_are_the_same_bits_on_every_member(void **) {
  for (bool halving : {false, true})
  for (int n : {2, 3, 4, 5, 8})
    for (size_t count : {size_t{13}, size_t{4099}})
      for (const auto &[dtype, op] : float_dtype_op_pairs()) {
          const size_t element = dtype_size(dtype);
          std::vector<reference::Bytes> results(static_cast<size_t>(n));
          expect_ok(fake::run_members(n, [&](fake::Transport &t) {
            const int me = t.index();
            reference::Bytes buffer(count * element);
            for (size_t i = 0; i < count; ++i) {
              unsigned char *at = buffer.data() + i * element;
              const uint32_t payload = static_cast<uint32_t>(me + 1) * 0x2F + static_cast<uint32_t>(i);
              switch (i % 4) {
                case 0: store_nan(at, dtype, payload, (me + static_cast<int>(i)) % 2 == 1); break;
                case 1:
                  if (static_cast<int>(i / 4) % n == me) store_nan(at, dtype, payload, false);
                  else reference::store(at, dtype, 0.5f);
                  break;
                case 2: reference::store(at, dtype, me % 2 ? -INFINITY : INFINITY); break;
                default: reference::store(at, dtype, 0.25f * static_cast<float>(me + 1)); break;
              }
            }
            Tuning tuning;
            tuning.chunk_bytes = 512;
            tuning.small_allreduce_bytes = 1024;
            tuning.halving_allreduce_bytes = halving ? SIZE_MAX : 0;
            algorithms::allreduce(t, buffer.data(), buffer.data(), count, dtype, op, tuning);
            results[static_cast<size_t>(me)] = buffer;
          }));
          for (int m = 1; m < n; ++m)
            if (results[static_cast<size_t>(m)] != results[0])
              fail_msg("n=%d count=%zu %s %s%s: member %d holds other bits than member 0", n, count,
                       dtype_name(dtype), redop_name(op), halving ? " halving-doubling" : "", m);
      }
}

void ring_has_2n_minus_2_steps_and_moves_2_n_minus_1_over_n_of_the_data(void **) {
  for (int n : {2, 3, 4, 7, 8}) {
    const size_t count = 1000;  // f32: 4000 bytes, ring (above 256)
    std::vector<fake::Stats> stats;
    expect_ok(fake::run_members(n, [&](fake::Transport &t) {
      reference::Bytes buffer = reference::make_input(t.index(), count, XFFL_F32, XFFL_SUM);
      algorithms::allreduce(t, buffer.data(), buffer.data(), count, XFFL_F32, XFFL_SUM, tiny_tuning());
    }, &stats));
    const std::vector<size_t> bounds = algorithms::balanced_bounds(count, n);
    for (int m = 0; m < n; ++m) {
      const fake::Stats &s = stats[static_cast<size_t>(m)];
      assert_int_equal(s.declared_total, 2 * (n - 1));
      assert_int_equal(s.steps_seen, 2 * (n - 1));
      assert_true(s.largest_message <= 64);
      // Reduce-scatter sends every segment but my own, all-gather every segment but my right neighbour's.
      size_t expected_bytes = 0;
      for (int seg = 0; seg < n; ++seg) expected_bytes += (bounds[seg + 1] - bounds[seg]) * 4;
      expected_bytes = 2 * expected_bytes;
      const size_t own = (bounds[m + 1] - bounds[m]) * 4;
      const size_t right = (bounds[(m + 1) % n + 1] - bounds[(m + 1) % n]) * 4;
      assert_int_equal(s.bytes_sent, expected_bytes - own - right);
    }
  }
}

// n members sum `count` f32 with halving-doubling, each checking the exact result; what each sent.
std::vector<fake::Stats> halving_doubling_sum(int n, size_t count) {
  std::vector<fake::Stats> stats;
  expect_ok(fake::run_members(n, [&](fake::Transport &t) {
    reference::Bytes buffer = reference::make_input(t.index(), count, XFFL_F32, XFFL_SUM);
    algorithms::allreduce(t, buffer.data(), buffer.data(), count, XFFL_F32, XFFL_SUM, halving_doubling(tiny_tuning()));
    if (buffer != reference::reduced(n, count, XFFL_F32, XFFL_SUM)) (xffl::fail)(XFFL_EINTERNAL, "wrong sum");
  }, &stats));
  return stats;
}

// 2 log2(p) steps, 2 more when folding. A member of the power of two sends (p - 1) / p of the buffer in
// the reduce-scatter and as much in the all-gather, as a ring member does with n; one folded away sends
// its buffer once, one folded in the result once more.
void halving_doubling_has_2_log_p_steps_and_moves_2_p_minus_1_over_p_of_the_data(void **) {
  for (int n : {2, 3, 4, 5, 6, 7, 8, 9}) {
    int p = 1, log_p = 0;
    while (p * 2 <= n) p *= 2, ++log_p;
    const int extra = n - p;
    const size_t count = 1000;  // a multiple of every p here: the blocks are equal
    const std::vector<fake::Stats> stats = halving_doubling_sum(n, count);
    const size_t buffer_bytes = count * 4, halves = 2 * buffer_bytes / static_cast<size_t>(p) * (p - 1);
    for (int m = 0; m < n; ++m) {
      const fake::Stats &s = stats[static_cast<size_t>(m)];
      const bool folded_away = m < 2 * extra && m % 2 == 0;
      const bool folded_in = m < 2 * extra && m % 2 == 1;
      assert_int_equal(s.declared_total, 2 * log_p + (extra ? 2 : 0));
      assert_true(s.largest_message <= 64);
      assert_int_equal(s.bytes_sent, folded_away ? buffer_bytes : halves + (folded_in ? buffer_bytes : 0));
    }
  }
}

// Nearest partners first: in each half a member exchanges half the buffer with the member next to it,
// a quarter with the one two away, .. 1/p with the farthest. A group's consecutive members share a
// node (a facility), so the large exchanges stay there. With members folded in (6, 7), the same
// between the p that remain, by their indices among the p, and the folded pairs swap whole buffers.
void halving_doubling_sends_the_most_to_its_nearest_members(void **) {
  for (int n : {2, 4, 6, 7, 8, 16}) {
    const size_t count = 4096;  // a multiple of every p here: the blocks are equal
    const size_t buffer_bytes = count * 4;
    const std::vector<fake::Stats> stats = halving_doubling_sum(n, count);
    for (int m = 0; m < n; ++m) {
      const algorithms::Folding fold(n, m);
      std::vector<size_t> expected(static_cast<size_t>(n), 0);
      if (fold.folded_away) {
        expected[static_cast<size_t>(m + 1)] = buffer_bytes;
      } else {
        if (fold.folded_in) expected[static_cast<size_t>(m - 1)] = buffer_bytes;
        for (int mask = 1; mask < fold.p; mask <<= 1)  // 1 / (2 mask) of the buffer in each half
          expected[static_cast<size_t>(fold.real_index(fold.virtual_index ^ mask))] = buffer_bytes / static_cast<size_t>(mask);
      }
      for (int peer = 0; peer < n; ++peer)
        if (stats[static_cast<size_t>(m)].bytes_sent_to[static_cast<size_t>(peer)] != expected[static_cast<size_t>(peer)])
          fail_msg("%d members: member %d sent %zu bytes to member %d, not %zu", n, m,
                   stats[static_cast<size_t>(m)].bytes_sent_to[static_cast<size_t>(peer)], peer,
                   expected[static_cast<size_t>(peer)]);
    }
  }
}

void allreduce_takes_its_schedule_by_size(void **) {
  using algorithms::AllreduceSchedule;
  Tuning tuning;
  tuning.small_allreduce_bytes = 1024;
  tuning.halving_allreduce_bytes = 8192;
  assert_true(algorithms::allreduce_schedule(256, XFFL_F32, 4, tuning) == AllreduceSchedule::recursive_doubling);
  assert_true(algorithms::allreduce_schedule(257, XFFL_F32, 4, tuning) == AllreduceSchedule::halving_doubling);
  assert_true(algorithms::allreduce_schedule(2048, XFFL_F32, 4, tuning) == AllreduceSchedule::halving_doubling);
  assert_true(algorithms::allreduce_schedule(2049, XFFL_F32, 4, tuning) == AllreduceSchedule::ring);
  // Fewer elements than members: recursive doubling whatever the bytes.
  assert_true(algorithms::allreduce_schedule(300, XFFL_F64, 301, tuning) == AllreduceSchedule::recursive_doubling);
  tuning.halving_allreduce_bytes = 0;
  assert_true(algorithms::allreduce_schedule(257, XFFL_F32, 4, tuning) == AllreduceSchedule::ring);
  // Unset: algorithm_choice.h's table, which has none below 4 members.
  tuning.halving_allreduce_bytes.reset();
  assert_true(algorithms::allreduce_schedule(257, XFFL_F32, 3, tuning) == AllreduceSchedule::ring);
  const size_t halving_upto = algorithm_choice::halving_allreduce_bytes(4) / 4;
  assert_true(halving_upto > 256);
  assert_true(algorithms::allreduce_schedule(halving_upto, XFFL_F32, 4, tuning) == AllreduceSchedule::halving_doubling);
  assert_true(algorithms::allreduce_schedule(halving_upto + 1, XFFL_F32, 4, tuning) == AllreduceSchedule::ring);
}

// The fake network is as strict as UCX's rendezvous sends, so that every schedule here is checked
// against it: a receive gets what the sender's buffer holds when the receive takes it, not when it was
// sent. A schedule that writes a buffer before its send completed delivers the new bytes here (the
// sender below writes 2 after sending 1; the receiver takes the message only after the second one).
void the_fake_network_reads_a_send_buffer_when_it_is_received(void **) {
  int received = 0;
  expect_ok(fake::run_members(2, [&](fake::Transport &t) {
    int value = 1, token = 0;
    if (t.index() == 0) {
      const algorithms::RequestId first = t.send(1, &value, sizeof value, algorithms::Step{0, 2});
      value = 2;  // what no schedule may do before waiting for the send
      t.send(1, &token, sizeof token, algorithms::Step{1, 2});
      t.wait(first);
      t.wait_all();
    } else {
      t.wait(t.recv(0, &token, sizeof token, algorithms::Step{1, 2}));
      t.wait(t.recv(0, &received, sizeof received, algorithms::Step{0, 2}));
    }
  }));
  assert_int_equal(received, 2);
}

void recursive_doubling_folds_non_powers_of_two(void **) {
  for (int n : {2, 3, 4, 5, 6, 7, 8, 9}) {
    int p = 1, log_p = 0;
    while (p * 2 <= n) p *= 2, ++log_p;
    std::vector<fake::Stats> stats;
    expect_ok(fake::run_members(n, [&](fake::Transport &t) {
      reference::Bytes buffer = reference::make_input(t.index(), 10, XFFL_I64, XFFL_MAX);
      algorithms::allreduce(t, buffer.data(), buffer.data(), 10, XFFL_I64, XFFL_MAX, Tuning());
      if (buffer != reference::reduced(t.size(), 10, XFFL_I64, XFFL_MAX)) (xffl::fail)(XFFL_EINTERNAL, "wrong max");
    }, &stats));
    const int extra = n - p;
    for (int m = 0; m < n; ++m) {
      const fake::Stats &s = stats[static_cast<size_t>(m)];
      assert_int_equal(s.declared_total, log_p + (extra ? 2 : 0));
      const bool folded_away = m < 2 * extra && m % 2 == 0;
      const bool folds_in = m < 2 * extra && m % 2 == 1;
      assert_int_equal(s.messages_sent, folded_away ? 1 : log_p + (folds_in ? 1 : 0));
    }
  }
}

void broadcast_trees_and_chains_have_their_shape(void **) {
  for (int n : {2, 3, 5, 8}) {
    int depth = 0;
    while ((1 << depth) < n) ++depth;
    for (int root : {0, n - 1}) {
      std::vector<fake::Stats> tree, chain;
      Tuning tuning;
      tuning.chunk_bytes = 100;
      tuning.small_broadcast_bytes = 1000;
      expect_ok(fake::run_members(n, [&](fake::Transport &t) {
        std::vector<unsigned char> buffer(80, static_cast<unsigned char>(t.index() == root ? 9 : 0));
        algorithms::broadcast(t, buffer.data(), buffer.size(), XFFL_U8, root, tuning);
      }, &tree));
      expect_ok(fake::run_members(n, [&](fake::Transport &t) {
        std::vector<unsigned char> buffer(1050, static_cast<unsigned char>(t.index() == root ? 9 : 0));
        algorithms::broadcast(t, buffer.data(), buffer.size(), XFFL_U8, root, tuning);
      }, &chain));
      assert_int_equal(tree[static_cast<size_t>(root)].messages_sent, depth);
      size_t tree_messages = 0;
      for (const auto &s : tree) tree_messages += s.messages_sent;
      assert_int_equal(tree_messages, n - 1);  // everyone but the root receives exactly once
      for (int m = 0; m < n; ++m) {
        const bool last = m == (root + n - 1) % n;
        assert_int_equal(chain[static_cast<size_t>(m)].messages_sent, last ? 0 : 11);  // ceil(1050 / 100)
        assert_true(chain[static_cast<size_t>(m)].largest_message <= 100);
      }
    }
  }
}

void barrier_takes_ceil_log2_rounds(void **) {
  for (int n : {1, 2, 3, 4, 5, 8, 9}) {
    int rounds = 0;
    while ((1 << rounds) < n) ++rounds;
    std::vector<fake::Stats> stats;
    expect_ok(fake::run_members(n, [&](fake::Transport &t) { algorithms::barrier(t); }, &stats));
    for (const auto &s : stats) {
      assert_int_equal(s.messages_sent, rounds);
      assert_int_equal(s.bytes_sent, 0);
    }
  }
}

void partitions_hold_for_counts_beyond_32_bits(void **) {
  const size_t huge = (size_t{1} << 40) + 3;
  for (int parts : {1, 2, 3, 7, 8}) {
    const std::vector<size_t> bounds = algorithms::balanced_bounds(huge, parts);
    assert_int_equal(bounds.front(), 0);
    assert_true(bounds.back() == huge);
    for (int i = 0; i < parts; ++i) {
      const size_t size = bounds[i + 1] - bounds[i];
      assert_true(size == huge / parts || size == huge / parts + 1);
    }
  }
  const std::vector<size_t> blocks = algorithms::block_bounds(size_t{3} << 31, 4);
  assert_true(blocks[4] == (size_t{3} << 33));
  assert_true(algorithms::chunk_count(size_t{5} << 31, size_t{1} << 20) == (size_t{5} << 11));
  assert_true(algorithms::chunk_elements(size_t{1} << 20, 8) == (size_t{1} << 17));
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(allreduce_matches_reference_for_every_dtype_op_and_size),
      cmocka_unit_test(reduce_scatter_matches_reference),
      cmocka_unit_test(allgather_and_broadcast_deliver_every_block),
      cmocka_unit_test(streamed_allgather_produces_before_sending_and_consumes_when_final),
      cmocka_unit_test(random_float_results_are_bit_identical_on_every_member),
      cmocka_unit_test(nan_payloads_are_the_same_bits_on_every_member),
      cmocka_unit_test(ring_has_2n_minus_2_steps_and_moves_2_n_minus_1_over_n_of_the_data),
      cmocka_unit_test(halving_doubling_has_2_log_p_steps_and_moves_2_p_minus_1_over_p_of_the_data),
      cmocka_unit_test(halving_doubling_sends_the_most_to_its_nearest_members),
      cmocka_unit_test(allreduce_takes_its_schedule_by_size),
      cmocka_unit_test(the_fake_network_reads_a_send_buffer_when_it_is_received),
      cmocka_unit_test(recursive_doubling_folds_non_powers_of_two),
      cmocka_unit_test(broadcast_trees_and_chains_have_their_shape),
      cmocka_unit_test(barrier_takes_ceil_log2_rounds),
      cmocka_unit_test(partitions_hold_for_counts_beyond_32_bits),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
