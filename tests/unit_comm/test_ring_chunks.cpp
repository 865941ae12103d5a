// The ring's chunk plan (RingChunks, comm/algorithms/chunks.h), the one object the ring all-reduce and
// the relay of federated averaging share: segment and chunk boundaries, the order in which each
// member learns the chunks final (checked against the order the ring on the fake transport really
// delivers them), counts that do not divide by the members, fewer elements than members, and zero.
#include <string>
#include <vector>

#include "comm/algorithms/chunks.h"
#include "comm/algorithms/collectives.h"
#include "fake_transport.h"
#include "reference.h"

// cmocka last: its fail() macro would rewrite xffl::fail in the headers above.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

using namespace xffl::comm;
using algorithms::RingChunks;
using algorithms::Span;
using algorithms::Tuning;

namespace {

Tuning chunks_of(size_t bytes) {
  Tuning tuning;
  tuning.chunk_bytes = bytes;
  tuning.window = 2;
  tuning.small_allreduce_bytes = 0;  // the ring whenever count >= members
  return tuning;
}

std::string spans_text(const std::vector<Span> &spans) {
  std::string text;
  for (const Span &s : spans) text += "[" + std::to_string(s.first) + "+" + std::to_string(s.count) + "]";
  return text;
}

void expect_spans(const std::vector<Span> &got, const std::vector<Span> &expected, const char *what) {
  if (spans_text(got) != spans_text(expected))
    fail_msg("%s: got %s, expected %s", what, spans_text(got).c_str(), spans_text(expected).c_str());
}

void boundaries_are_balanced_and_chunks_bounded(void **) {
  // 10 f32 over 3 members, 8-byte messages: segments 4, 3, 3 (larger first), chunks of 2 elements.
  const RingChunks plan = RingChunks::for_allreduce(10, XFFL_F32, XFFL_SUM, 3, chunks_of(8));
  assert_int_equal(plan.members(), 3);
  assert_int_equal(plan.per_chunk(), 2);
  assert_true(plan.bounds() == (std::vector<size_t>{0, 4, 7, 10}));
  expect_spans(plan.segment_chunks(0), {{0, 2}, {2, 2}}, "segment 0");
  expect_spans(plan.segment_chunks(1), {{4, 2}, {6, 1}}, "segment 1");
  expect_spans(plan.segment_chunks(2), {{7, 2}, {9, 1}}, "segment 2");
}

void chunks_are_sized_in_the_wider_of_the_dtype_and_its_accumulation_type(void **) {
  // f16 is reduced and carried in f32: 64 bytes hold 16 of them, not 32. f64 stays f64.
  assert_int_equal(RingChunks::for_allreduce(100, XFFL_F16, XFFL_SUM, 2, chunks_of(64)).per_chunk(), 16);
  assert_int_equal(RingChunks::for_allreduce(100, XFFL_F64, XFFL_SUM, 2, chunks_of(64)).per_chunk(), 8);
  // i32 AVG sums in i64.
  assert_int_equal(RingChunks::for_allreduce(100, XFFL_I32, XFFL_AVG, 2, chunks_of(64)).per_chunk(), 8);
  assert_int_equal(RingChunks::for_allreduce(100, XFFL_I32, XFFL_SUM, 2, chunks_of(64)).per_chunk(), 16);
  // A budget below one element still makes progress: one element per message.
  assert_int_equal(RingChunks::for_allreduce(100, XFFL_F64, XFFL_SUM, 2, chunks_of(3)).per_chunk(), 1);
}

void each_member_learns_its_own_segment_first_then_its_left_neighbours(void **) {
  // 4 members, 11 elements (3, 3, 3, 2), two per message.
  const RingChunks plan = RingChunks::for_allreduce(11, XFFL_F32, XFFL_SUM, 4, chunks_of(8));
  expect_spans(plan.delivery_order(0), {{0, 2}, {2, 1}, {9, 2}, {6, 2}, {8, 1}, {3, 2}, {5, 1}}, "member 0");
  expect_spans(plan.delivery_order(2), {{6, 2}, {8, 1}, {3, 2}, {5, 1}, {0, 2}, {2, 1}, {9, 2}}, "member 2");
  // Reduce-scatter alone: every segment but segment me - 1 (the one I send first), segment me last.
  std::vector<Span> received;
  for (const RingChunks::Arrival &a : plan.arrivals(1, 3)) received.push_back(a.span);
  expect_spans(received, {{9, 2}, {6, 2}, {8, 1}, {3, 2}, {5, 1}}, "member 1's reduce-scatter arrivals");
  const std::vector<RingChunks::Arrival> all = plan.arrivals(1, 6);
  assert_int_equal(all.size(), 10);  // the 5 above, then the 5 of segments 0, 3 and 2 gathered
  assert_int_equal(all.front().step, 0);
  assert_int_equal(all.back().step, 5);
}

// Every element exactly once, no chunk above per_chunk, own segment first.
void check_cover(const RingChunks &plan, int me, size_t count) {
  const std::vector<Span> order = plan.delivery_order(me);
  std::vector<int> seen(count, 0);
  for (const Span &s : order) {
    assert_true(s.count >= 1 && s.count <= plan.per_chunk());
    assert_true(s.first + s.count <= count);
    for (size_t i = s.first; i < s.first + s.count; ++i) ++seen[i];
  }
  for (size_t i = 0; i < count; ++i)
    if (seen[i] != 1) fail_msg("count %zu, %d members, member %d: element %zu delivered %d times", count,
                               plan.members(), me, i, seen[i]);
  const std::vector<Span> own = plan.segment_chunks(me);
  for (size_t c = 0; c < own.size(); ++c) assert_int_equal(order[c].first, own[c].first);
}

void every_element_is_delivered_once_for_any_count(void **) {
  for (int n : {2, 3, 4, 5, 7}) {
    const size_t m = static_cast<size_t>(n);
    for (size_t count : std::vector<size_t>{0, 1, m - 1, m, m + 1, 97, 1000})
      for (size_t chunk_bytes : {size_t{4}, size_t{12}, size_t{4096}}) {
        const RingChunks plan = RingChunks::for_allreduce(count, XFFL_F32, XFFL_SUM, n, chunks_of(chunk_bytes));
        for (int me = 0; me < n; ++me) check_cover(plan, me, count);
      }
  }
}

void fewer_elements_than_members_leave_empty_segments(void **) {
  // 2 elements over 5 members: members 0 and 1 own one each, the others nothing.
  const RingChunks plan = RingChunks::for_allreduce(2, XFFL_F32, XFFL_SUM, 5, chunks_of(64));
  assert_true(plan.bounds() == (std::vector<size_t>{0, 1, 2, 2, 2, 2}));
  assert_true(plan.segment_chunks(3).empty());
  expect_spans(plan.delivery_order(4), {{1, 1}, {0, 1}}, "member 4 (empty segment)");
  expect_spans(plan.delivery_order(1), {{1, 1}, {0, 1}}, "member 1");
  expect_spans(plan.delivery_order(0), {{0, 1}, {1, 1}}, "member 0");
}

void zero_elements_plan_nothing(void **) {
  const RingChunks plan = RingChunks::for_allreduce(0, XFFL_F32, XFFL_SUM, 3, chunks_of(64));
  assert_true(plan.bounds() == (std::vector<size_t>{0, 0, 0, 0}));
  for (int me = 0; me < 3; ++me) {
    assert_true(plan.delivery_order(me).empty());
    assert_true(plan.arrivals(me, 4).empty());
  }
}

// The invariant the relay depends on: the ring calls `delivered` in exactly the plan's order.
void the_ring_delivers_in_the_plans_order(void **) {
  for (int n : {2, 3, 4, 6})
    for (size_t count : std::vector<size_t>{static_cast<size_t>(n), static_cast<size_t>(n) + 1, 61, 600})
      for (xffl_dtype_t dtype : {XFFL_F32, XFFL_BF16, XFFL_F64})
        for (xffl_redop_t op : {XFFL_SUM, XFFL_AVG}) {
          const Tuning tuning = chunks_of(24);
          std::vector<std::vector<Span>> delivered(static_cast<size_t>(n));
          const std::string error = fake::run_members(n, [&](fake::Transport &t) {
            reference::Bytes buffer = reference::make_input(t.index(), count, dtype, op);
            std::vector<Span> &mine = delivered[static_cast<size_t>(t.index())];
            algorithms::ring_allreduce(t, buffer.data(), buffer.data(), count, dtype, op, tuning,
                                       [&](size_t first, size_t chunk) { mine.push_back({first, chunk}); });
          });
          if (!error.empty()) fail_msg("%s", error.c_str());
          const RingChunks plan = RingChunks::for_allreduce(count, dtype, op, n, tuning);
          for (int me = 0; me < n; ++me) {
            const std::string what = "n=" + std::to_string(n) + " count=" + std::to_string(count) + " " +
                                     dtype_name(dtype) + " member " + std::to_string(me);
            expect_spans(delivered[static_cast<size_t>(me)], plan.delivery_order(me), what.c_str());
          }
        }
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(boundaries_are_balanced_and_chunks_bounded),
      cmocka_unit_test(chunks_are_sized_in_the_wider_of_the_dtype_and_its_accumulation_type),
      cmocka_unit_test(each_member_learns_its_own_segment_first_then_its_left_neighbours),
      cmocka_unit_test(every_element_is_delivered_once_for_any_count),
      cmocka_unit_test(fewer_elements_than_members_leave_empty_segments),
      cmocka_unit_test(zero_elements_plan_nothing),
      cmocka_unit_test(the_ring_delivers_in_the_plans_order),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
