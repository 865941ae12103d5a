// Reduction kernels and f16/bf16 conversions: every f16 round-trips, f32 -> f16/bf16 rounds to
// nearest even, integer SUM/PROD wrap, operand order and aliasing, AVG truncation. The streaming copy:
// every alignment and every length around its cache lines, nothing written outside. Each reduction
// and copy test runs with the kernels' baseline copy and with their AVX-512 copy (where the CPU has
// it), and the two give the same values.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "comm/half.h"
#include "comm/reduce.h"
#include "comm/streaming_copy.h"
#include "comm/wide_vectors.h"

// cmocka last: its fail() macro would rewrite xffl::fail in the headers above. It has no
// extern "C" of its own.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

using namespace xffl::comm;

namespace {

uint32_t bits(float value) {
  uint32_t b;
  std::memcpy(&b, &value, 4);
  return b;
}

float from_bits(uint32_t b) {
  float value;
  std::memcpy(&value, &b, 4);
  return value;
}

// Runs `body` with the kernels' baseline copy, then with their AVX-512 copy where the CPU has one
// (comm/wide_vectors.h).
template <typename Body>
void in_both_copies(Body body) {
  set_portable_kernels(true);
  body();
  set_portable_kernels(false);
  if (use_avx512()) body();
}

void every_f16_round_trips_through_f32(void **) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float wide = f16_to_f32(static_cast<uint16_t>(h));
    const bool nan = (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu);
    if (nan) {
      assert_true(std::isnan(wide));
      assert_true(std::isnan(f16_to_f32(f32_to_f16(wide))));
      continue;
    }
    if (f32_to_f16(wide) != h) fail_msg("f16 0x%04x -> %g -> 0x%04x", h, static_cast<double>(wide), f32_to_f16(wide));
  }
  assert_true(f16_to_f32(0x3c00) == 1.0f);
  assert_true(f16_to_f32(0x0001) == std::ldexp(1.0f, -24));  // smallest subnormal
  assert_true(f16_to_f32(0x7bff) == 65504.0f);
}

void f32_to_f16_rounds_to_nearest_even(void **) {
  assert_int_equal(f32_to_f16(1.0f + std::ldexp(1.0f, -11)), 0x3c00);         // tie: stays even
  assert_int_equal(f32_to_f16(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);     // tie: rounds up to even
  assert_int_equal(f32_to_f16(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)), 0x3c01);
  assert_int_equal(f32_to_f16(65520.0f), 0x7c00);                             // overflows to infinity
  assert_int_equal(f32_to_f16(-1e9f), 0xfc00);
  assert_int_equal(f32_to_f16(std::ldexp(1.0f, -25)), 0x0000);                // tie below the smallest: even
  assert_int_equal(f32_to_f16(std::ldexp(3.0f, -26)), 0x0001);
  assert_int_equal(f32_to_f16(std::numeric_limits<float>::quiet_NaN()) & 0x7e00, 0x7e00);
  // Vector form agrees with the scalar one.
  std::vector<float> values = {0.1f, -2.5f, 65504.0f, 1e-7f, 3.14159f};
  std::vector<uint16_t> halves(values.size());
  f32_to_f16(values.data(), halves.data(), values.size());
  for (size_t i = 0; i < values.size(); ++i) assert_int_equal(halves[i], f32_to_f16(values[i]));
}

void bf16_keeps_the_upper_half_rounded_to_nearest_even(void **) {
  assert_int_equal(f32_to_bf16(1.0f), 0x3f80);
  assert_int_equal(f32_to_bf16(from_bits(0x3f808000u)), 0x3f80);  // tie: even
  assert_int_equal(f32_to_bf16(from_bits(0x3f818000u)), 0x3f82);  // tie: up to even
  assert_int_equal(f32_to_bf16(from_bits(0x3f808001u)), 0x3f81);
  assert_true(std::isnan(bf16_to_f32(f32_to_bf16(std::numeric_limits<float>::quiet_NaN()))));
  assert_int_equal(f32_to_bf16(from_bits(0x7f7fffffu)), 0x7f80);  // max float rounds to infinity
  for (uint32_t h = 0; h < 65536; ++h) {
    const float wide = bf16_to_f32(static_cast<uint16_t>(h));
    if (!std::isnan(wide)) assert_int_equal(f32_to_bf16(wide), h);
  }
  assert_true(bits(bf16_to_f32(0x3f80)) == 0x3f800000u);
}

void integer_sum_and_prod_wrap_body() {
  std::vector<int8_t> a = {127, -128, 100}, b = {1, -1, 100};
  std::vector<int8_t> out(3);
  combine(out.data(), a.data(), b.data(), 3, XFFL_I8, XFFL_SUM);
  assert_int_equal(out[0], -128);
  assert_int_equal(out[1], 127);
  assert_int_equal(out[2], -56);
  combine(out.data(), a.data(), b.data(), 3, XFFL_I8, XFFL_PROD);
  assert_int_equal(out[2], static_cast<int8_t>(10000 & 0xff));
  std::vector<int64_t> big = {std::numeric_limits<int64_t>::max()}, one = {1};
  combine(big.data(), big.data(), one.data(), 1, XFFL_I64, XFFL_SUM);
  assert_true(big[0] == std::numeric_limits<int64_t>::min());
  std::vector<uint8_t> u = {250}, v = {10};
  combine(u.data(), u.data(), v.data(), 1, XFFL_U8, XFFL_SUM);
  assert_int_equal(u[0], 4);
}
void integer_sum_and_prod_wrap(void **) { in_both_copies(integer_sum_and_prod_wrap_body); }

void operand_order_and_aliasing_body() {
  // MIN keeps a NaN on the left and drops one on the right: the order is part of the result.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> left = {nan, 1.0f, -0.0f}, right = {1.0f, nan, 0.0f}, out(3);
  combine(out.data(), left.data(), right.data(), 3, XFFL_F32, XFFL_MIN);
  assert_true(std::isnan(out[0]));
  assert_true(out[1] == 1.0f);
  assert_true(std::signbit(out[2]));
  // out == left, out == right and all three the same give what the distinct form gives.
  std::vector<double> x(1000), y(1000), expected(1000);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 0.5 * static_cast<double>(i), y[i] = 3.0 - static_cast<double>(i);
  combine(expected.data(), x.data(), y.data(), x.size(), XFFL_F64, XFFL_SUM);
  std::vector<double> in_left = x, in_right = y;
  combine(in_left.data(), in_left.data(), y.data(), x.size(), XFFL_F64, XFFL_SUM);
  combine(in_right.data(), x.data(), in_right.data(), x.size(), XFFL_F64, XFFL_SUM);
  assert_true(in_left == expected);
  assert_true(in_right == expected);
  std::vector<double> twice = x;
  combine(twice.data(), twice.data(), twice.data(), x.size(), XFFL_F64, XFFL_SUM);
  for (size_t i = 0; i < x.size(); ++i) assert_true(twice[i] == 2 * x[i]);
}
void operand_order_and_aliasing(void **) { in_both_copies(operand_order_and_aliasing_body); }

void average_divides_once_and_truncates_toward_zero(void **) {
  assert_int_equal(accumulation_dtype(XFFL_I8, XFFL_AVG), XFFL_I64);
  assert_int_equal(accumulation_dtype(XFFL_I8, XFFL_SUM), XFFL_I8);
  assert_int_equal(accumulation_dtype(XFFL_BF16, XFFL_MAX), XFFL_F32);
  assert_int_equal(accumulation_dtype(XFFL_I64, XFFL_AVG), XFFL_I64);
  std::vector<int64_t> sums = {-7, 7, 300};
  divide(sums.data(), 3, XFFL_I64, 2);
  assert_true(sums[0] == -3 && sums[1] == 3 && sums[2] == 150);
  std::vector<int8_t> narrow(3);
  convert(sums.data(), XFFL_I64, narrow.data(), XFFL_I8, 3);
  assert_int_equal(narrow[0], -3);
  std::vector<float> f = {1.0f, 2.0f};
  divide(f.data(), 2, XFFL_F32, 3);
  assert_true(f[0] == 1.0f / 3.0f);
  std::vector<uint16_t> halves = {0x3c00, 0xc000};  // 1, -2
  std::vector<float> wide(2);
  convert(halves.data(), XFFL_F16, wide.data(), XFFL_F32, 2);
  assert_true(wide[0] == 1.0f && wide[1] == -2.0f);
}


// Every offset of the destination within a cache line (the streaming stores start at the first line
// boundary), four of the source, lengths from 0 to past two lines and a few large odd ones: the bytes
// copied exactly, the guard bytes on both sides untouched.
void streaming_copy_copies_exactly_at_every_alignment(void **) {
  constexpr size_t kGuard = 64;
  std::vector<size_t> lengths;
  for (size_t length = 0; length <= 200; ++length) lengths.push_back(length);
  for (size_t length : {size_t{4095}, size_t{4096}, size_t{4097}, size_t{65536 + 17}, size_t{(1u << 20) + 13}})
    lengths.push_back(length);
  std::vector<unsigned char> source((1u << 20) + 256);
  for (size_t i = 0; i < source.size(); ++i) source[i] = static_cast<unsigned char>(i * 131 + 7);
  for (size_t length : lengths) {
    std::vector<unsigned char> target(length + 64 + 2 * kGuard);
    // The first line boundary after the front guard: the destination at every offset from it.
    unsigned char *line = target.data() + kGuard + (64 - reinterpret_cast<uintptr_t>(target.data() + kGuard) % 64) % 64;
    for (size_t to_offset = 0; to_offset < 64; ++to_offset) {
      if (length > 4096 && to_offset % 16 != 3 && to_offset != 0) continue;  // large ones: a few offsets
      for (size_t from_offset = 0; from_offset < 4; ++from_offset) {
        std::memset(target.data(), 0xA5, target.size());
        unsigned char *to = line + to_offset;
        copy_streaming(to, source.data() + from_offset, length);
        assert_int_equal(reinterpret_cast<uintptr_t>(to) % 64, to_offset);
        assert_memory_equal(to, source.data() + from_offset, length);
        for (unsigned char *p = target.data(); p < to; ++p) assert_int_equal(*p, 0xA5);
        for (unsigned char *p = to + length; p < target.data() + target.size(); ++p) assert_int_equal(*p, 0xA5);
      }
    }
  }
}

// Whether a and b hold the same `bytes` of `type`: the same bits, except that two float NaNs are the
// same whatever their payloads. A sum or product of two NaNs keeps the payload of the operand x86
// takes first, and the compiler puts either first, per loop and per part of a loop (they commute):
// GCC 12's into-left loop keeps the right's payload in its vector body and the left's in its scalar
// tail, the into-right loop the right's everywhere (why recursive doubling runs one form on both
// partners: algorithms/recursive_doubling.cpp).
bool same_values(xffl_dtype_t type, const unsigned char *a, const unsigned char *b, size_t bytes) {
  if (type != XFFL_F32 && type != XFFL_F64) return std::memcmp(a, b, bytes) == 0;
  const size_t size = type == XFFL_F32 ? 4 : 8;
  for (size_t at = 0; at < bytes; at += size) {
    if (std::memcmp(a + at, b + at, size) == 0) continue;
    double x, y;
    if (type == XFFL_F32) {
      float fx, fy;
      std::memcpy(&fx, a + at, 4), std::memcpy(&fy, b + at, 4);
      x = fx, y = fy;
    } else {
      std::memcpy(&x, a + at, 8), std::memcpy(&y, b + at, 8);
    }
    if (!(std::isnan(x) && std::isnan(y))) return false;
  }
  return true;
}

// The two copies of combine give the same values for every type reduced directly
// and every op (same_values: the same bits but a NaN's payload), on random bit patterns (NaNs,
// infinities, signed zeros and subnormals among the floats), out distinct from both operands, out ==
// left and out == right.
void both_copies_of_the_reductions_give_the_same_values(void **) {
  set_portable_kernels(false);
  if (!use_avx512()) skip();
  const xffl_dtype_t types[] = {XFFL_F32, XFFL_F64, XFFL_I8, XFFL_U8, XFFL_I32, XFFL_I64};
  const xffl_redop_t ops[] = {XFFL_SUM, XFFL_PROD, XFFL_MIN, XFFL_MAX, XFFL_AVG};
  constexpr size_t kBytes = kAvx512From + 40;  // the AVX-512 copy runs; not a whole number of lines
  std::vector<unsigned char> left(kBytes), right(kBytes);
  uint64_t state = 0x9E3779B97F4A7C15ull;
  auto next = [&] {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    return static_cast<unsigned char>(state);
  };
  for (auto &byte : left) byte = next();
  for (auto &byte : right) byte = next();
  for (xffl_dtype_t type : types)
    for (xffl_redop_t op : ops) {
      const size_t count = kBytes / (type == XFFL_F32 || type == XFFL_I32 ? 4 : type == XFFL_F64 || type == XFFL_I64 ? 8 : 1);
      std::vector<unsigned char> results[2][3];
      for (int copy = 0; copy < 2; ++copy) {
        set_portable_kernels(copy == 0);
        std::vector<unsigned char> distinct(kBytes), in_left = left, in_right = right;
        combine(distinct.data(), left.data(), right.data(), count, type, op);
        combine(in_left.data(), in_left.data(), right.data(), count, type, op);
        combine(in_right.data(), left.data(), in_right.data(), count, type, op);
        results[copy][0] = distinct, results[copy][1] = in_left, results[copy][2] = in_right;
      }
      set_portable_kernels(false);
      for (int form = 0; form < 3; ++form)
        assert_true(same_values(type, results[0][form].data(), results[1][form].data(), kBytes));
      for (int form = 1; form < 3; ++form)
        assert_true(same_values(type, results[0][0].data(), results[0][form].data(), kBytes));
    }
}

// The AVX-512 copy runs from kAvx512From bytes of a loop, and only where the CPU has it and tests did
// not switch it off.
void the_avx512_copy_runs_from_its_size(void **) {
  set_portable_kernels(false);
#if XFFL_HAS_AVX512_COPY
  assert_true(use_avx512() == static_cast<bool>(__builtin_cpu_supports("avx512f")));
#else
  assert_false(use_avx512());
#endif
  assert_false(use_avx512_for(kAvx512From - 1));
  assert_true(use_avx512_for(kAvx512From) == use_avx512());
  set_portable_kernels(true);
  assert_false(use_avx512());
  assert_false(use_avx512_for(kAvx512From));
  set_portable_kernels(false);
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_f16_round_trips_through_f32),
      cmocka_unit_test(f32_to_f16_rounds_to_nearest_even),
      cmocka_unit_test(bf16_keeps_the_upper_half_rounded_to_nearest_even),
      cmocka_unit_test(integer_sum_and_prod_wrap),
      cmocka_unit_test(operand_order_and_aliasing),
      cmocka_unit_test(average_divides_once_and_truncates_toward_zero),
      cmocka_unit_test(streaming_copy_copies_exactly_at_every_alignment),
      cmocka_unit_test(both_copies_of_the_reductions_give_the_same_values),
      cmocka_unit_test(the_avx512_copy_runs_from_its_size),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
