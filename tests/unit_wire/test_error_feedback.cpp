// Error feedback's residual store (federated/wire/error_feedback.h): residuals per layout and per hop,
// dropped when the format, a count or the list of buffers changes; and the property it exists for:
// over many rounds, what crossed sums to what was meant, within one round's error.
#include <cmath>
#include <vector>

#include "federated/wire/error_feedback.h"
#include "federated/wire/wire_format.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

extern "C" {  // Debian's cmocka.h declares its functions without C linkage for C++
#include <cmocka.h>
}

using namespace xffl::federated::wire;

namespace {

void begin_one(ErrorFeedback &feedback, void *buf, size_t count, xffl_wire_format_t format) {
  feedback.begin(&buf, &count, 1, format);
}

void test_residuals_kept_per_buffer_and_hop(void **) {
  ErrorFeedback feedback;
  float a[4], b[8];
  begin_one(feedback, a, 4, XFFL_WIRE_INT8_BLOCK);
  feedback.next(4)[0] = 1.0f;
  begin_one(feedback, b, 8, XFFL_WIRE_INT8_BLOCK);
  feedback.next(8)[0] = 2.0f;
  begin_one(feedback, a, 4, XFFL_WIRE_INT8_BLOCK);
  assert_true(feedback.next(4)[0] == 1.0f);  // a's own residual, b's kept apart
  begin_one(feedback, b, 8, XFFL_WIRE_INT8_BLOCK);
  assert_true(feedback.next(8)[0] == 2.0f);
  assert_int_equal(feedback.bytes(), 12 * sizeof(float));

  // Several hops of one call (buckets of _many): one residual each, in order.
  void *bufs[] = {a, b};
  size_t counts[] = {4, 8};
  feedback.begin(bufs, counts, 2, XFFL_WIRE_INT8_BLOCK);  // shares a and b: their single layouts go
  assert_int_equal(feedback.bytes(), 0);
  feedback.next(3)[0] = 5.0f;
  feedback.next(9)[0] = 6.0f;
  feedback.begin(bufs, counts, 2, XFFL_WIRE_INT8_BLOCK);
  assert_true(feedback.next(3)[0] == 5.0f);
  assert_true(feedback.next(9)[0] == 6.0f);
}

void test_changes_drop_residuals(void **) {
  ErrorFeedback feedback;
  float a[4];
  begin_one(feedback, a, 4, XFFL_WIRE_INT8_BLOCK);
  feedback.next(4)[1] = 1.0f;
  begin_one(feedback, a, 3, XFFL_WIRE_INT8_BLOCK);  // a new count at the same address
  assert_true(feedback.next(3)[1] == 0.0f);
  assert_int_equal(feedback.bytes(), 3 * sizeof(float));
  feedback.next(3);  // (a second hop of the same call)
  begin_one(feedback, a, 3, XFFL_WIRE_BF16);  // a new format
  assert_int_equal(feedback.bytes(), 0);
  feedback.next(3)[0] = 1.0f;
  feedback.clear();
  assert_int_equal(feedback.bytes(), 0);
}

// One rank's contribution x sent round after round: with error feedback the sum of what crossed is
// within one round's quantisation error of rounds * x; without, the same rounding repeats and the
// error grows with the rounds.
void test_accumulated_error_stays_bounded(void **) {
  const size_t count = 1000;
  const int rounds = 50;
  std::vector<float> x(count);
  for (size_t i = 0; i < count; ++i) x[i] = static_cast<float>(std::sin(0.37 * static_cast<double>(i)) * 0.01);
  for (const Codec *c : {&kBf16, &kF16, &kInt8Block, &kInt4Block}) {
    ErrorFeedback feedback;
    std::vector<double> sent_with(count, 0.0), sent_without(count, 0.0);
    std::vector<unsigned char> bytes(c->encoded_size(count));
    std::vector<float> input(count), decoded(count);
    for (int round = 0; round < rounds; ++round) {
      begin_one(feedback, x.data(), count, c->format);
      std::vector<float> &residual = feedback.next(count);
      for (size_t i = 0; i < count; ++i) input[i] = x[i] + residual[i];
      c->encode(input.data(), count, bytes.data());
      c->decode(bytes.data(), count, decoded.data());
      for (size_t i = 0; i < count; ++i) {
        residual[i] = input[i] - decoded[i];
        sent_with[i] += decoded[i];
      }
      c->encode(x.data(), count, bytes.data());
      c->decode(bytes.data(), count, decoded.data());
      for (size_t i = 0; i < count; ++i) sent_without[i] += decoded[i];
    }
    double worst_with = 0, worst_without = 0;
    for (size_t i = 0; i < count; ++i) {
      worst_with = std::fmax(worst_with, std::fabs(sent_with[i] - rounds * static_cast<double>(x[i])));
      worst_without = std::fmax(worst_without, std::fabs(sent_without[i] - rounds * static_cast<double>(x[i])));
    }
    // One round's error is at most relative_error * 0.01 (twice that for the residual's own share).
    const double one_round = 2 * c->relative_error * 0.01 + 1e-6;
    if (worst_with > one_round)
      fail_msg("%s: accumulated error %.3g after %d rounds exceeds one round's %.3g", c->name, worst_with, rounds,
               one_round);
    if (!(worst_without > worst_with))
      fail_msg("%s: without error feedback %.3g, with %.3g", c->name, worst_without, worst_with);
  }
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_residuals_kept_per_buffer_and_hop),
      cmocka_unit_test(test_changes_drop_residuals),
      cmocka_unit_test(test_accumulated_error_stays_bounded),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
