// The wire formats (federated/wire/wire_format.h) as pure functions: sizes, exact round trips where the
// format is exact, the stated error bounds, NaN and Inf, counts that are not a multiple of a block, and
// zero counts.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "federated/wire/vector_isa.h"
#include "federated/wire/wire_format.h"

// cmocka last: its fail() macro would clash with xffl::fail.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

extern "C" {  // Debian's cmocka.h declares its functions without C linkage for C++
#include <cmocka.h>
}

using namespace xffl::federated::wire;

namespace {

const Codec *const kAll[] = {&kF32, &kBf16, &kF16, &kInt8Block, &kInt4Block};

std::vector<float> round_trip(const Codec &codec, const std::vector<float> &values) {
  std::vector<unsigned char> bytes(codec.encoded_size(values.size()) + 1);
  bytes.back() = 0xA5;  // a guard: encode writes exactly encoded_size bytes
  codec.encode(values.data(), values.size(), bytes.data());
  if (bytes.back() != 0xA5) fail_msg("%s wrote past encoded_size(%zu)", codec.name, values.size());
  std::vector<float> out(values.size(), -1.0f);
  codec.decode(bytes.data(), values.size(), out.data());
  return out;
}

std::vector<float> random_values(size_t count, unsigned seed, float spread) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, spread);
  std::vector<float> values(count);
  for (float &x : values) x = normal(rng);
  return values;
}

void test_lookup_and_names(void **) {
  for (const Codec *c : kAll) {
    assert_true(valid_format(c->format));
    assert_ptr_equal(&codec(c->format), c);
    assert_string_equal(format_name(c->format), c->name);
  }
  assert_false(valid_format(-1));
  assert_false(valid_format(5));
  assert_string_equal(format_name(7), "unknown");
}

void test_sizes(void **) {
  for (const Codec *c : kAll) assert_int_equal(c->encoded_size(0), 0);
  assert_int_equal(kF32.encoded_size(10), 40);
  assert_int_equal(kBf16.encoded_size(10), 20);
  assert_int_equal(kF16.encoded_size(10), 20);
  assert_int_equal(kInt8Block.encoded_size(256), 256 + 4);
  assert_int_equal(kInt8Block.encoded_size(257), 257 + 8);
  assert_int_equal(kInt4Block.encoded_size(64), 32 + 4);
  assert_int_equal(kInt4Block.encoded_size(65), 33 + 8);
  assert_int_equal(kInt4Block.encoded_size(1), 1 + 4);
}

void test_zero_count(void **) {
  for (const Codec *c : kAll) {
    c->encode(nullptr, 0, nullptr);
    c->decode(nullptr, 0, nullptr);
    c->decode_add(nullptr, 0, nullptr);
  }
}

// Values the formats hold exactly come back bit for bit: small integers (bf16, f16), and for the
// block formats a block whose values are multiples of max/levels.
void test_exact_values(void **) {
  std::vector<float> integers;
  for (int i = -100; i <= 100; ++i) integers.push_back(static_cast<float>(i));
  for (const Codec *c : {&kF32, &kBf16, &kF16}) {
    std::vector<float> out = round_trip(*c, integers);
    assert_memory_equal(out.data(), integers.data(), integers.size() * sizeof(float));
  }
  std::vector<float> codes;
  for (int i = 0; i < 300; ++i) codes.push_back(static_cast<float>(i % 256 % 255 - 127));  // -127 opens every block
  std::vector<float> out = round_trip(kInt8Block, codes);
  assert_memory_equal(out.data(), codes.data(), codes.size() * sizeof(float));
  std::vector<float> nibbles;
  for (int i = 0; i < 130; ++i) nibbles.push_back(static_cast<float>(i % 64 % 15 - 7));  // -7 opens every block
  out = round_trip(kInt4Block, nibbles);
  assert_memory_equal(out.data(), nibbles.data(), nibbles.size() * sizeof(float));
  // F32 is exact for anything, the signs of zero and NaN payloads included.
  std::vector<float> odd = {-0.0f, std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::max()};
  out = round_trip(kF32, odd);
  assert_memory_equal(out.data(), odd.data(), odd.size() * sizeof(float));
}

// Every format within its stated bound, for counts around the block sizes and values of mixed scale.
void test_error_bounds(void **) {
  for (size_t count : {size_t{1}, size_t{63}, size_t{64}, size_t{65}, size_t{255}, size_t{256}, size_t{257},
                       size_t{1000}, size_t{4097}}) {
    std::vector<float> values = random_values(count, static_cast<unsigned>(count), 0.1f);
    for (size_t i = 0; i < count; i += 97) values[i] *= 300.0f;  // outliers in some blocks
    for (const Codec *c : kAll) {
      std::vector<float> out = round_trip(*c, values);
      for (size_t i = 0; i < count; ++i) {
        double reference = std::fabs(values[i]);
        if (c->block) {  // relative to the block's largest |x|
          const size_t first = i / c->block * c->block, last = std::min(count, first + c->block);
          reference = 0;
          for (size_t j = first; j < last; ++j) reference = std::fmax(reference, std::fabs(values[j]));
        }
        // f16 below 2^-14 is subnormal: an absolute error of at most 2^-25 there.
        const double bound = c->relative_error * reference * (1 + 1e-6) + (c == &kF16 ? 0x1p-25 : 0.0);
        const double error = std::fabs(static_cast<double>(out[i]) - values[i]);
        if (error > bound)
          fail_msg("%s, count %zu, index %zu: |%.9g - %.9g| = %.3g > bound %.3g", c->name, count, i, out[i], values[i],
                   error, bound);
      }
    }
  }
}

// Rounding is to nearest, ties to even: 0.5 and 1.5 and 2.5 steps go to 0, 2 and 2.
void test_ties_to_even(void **) {
  std::vector<float> values(256, 0.0f);
  values[0] = 127.0f;  // scale 1
  values[1] = 0.5f;
  values[2] = 1.5f;
  values[3] = 2.5f;
  values[4] = -2.5f;
  std::vector<float> out = round_trip(kInt8Block, values);
  assert_true(out[1] == 0.0f);
  assert_true(out[2] == 2.0f);
  assert_true(out[3] == 2.0f);
  assert_true(out[4] == -2.0f);
}

void test_zero_blocks(void **) {
  std::vector<float> zeros(300, 0.0f);
  for (const Codec *c : kAll) {
    std::vector<float> out = round_trip(*c, zeros);
    for (float x : out) assert_true(x == 0.0f);
  }
  // A zero block next to a non-zero one keeps its zeros and the other its values.
  std::vector<float> mixed(512, 0.0f);
  mixed[300] = 3.0f;
  std::vector<float> out = round_trip(kInt8Block, mixed);
  assert_true(out[300] == 3.0f);
  for (size_t i = 0; i < 256; ++i) assert_true(out[i] == 0.0f);
}

// NaN and Inf: kept by the float formats; a block format turns the block holding one into NaN and
// leaves the other blocks alone.
void test_non_finite(void **) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  std::vector<float> values = random_values(520, 7, 1.0f);
  values[3] = nan;
  values[70] = inf;
  values[400] = -inf;
  for (const Codec *c : {&kBf16, &kF16, &kF32}) {
    std::vector<float> out = round_trip(*c, values);
    assert_true(std::isnan(out[3]));
    assert_true(out[70] == inf);
    assert_true(out[400] == -inf);
    assert_true(std::isfinite(out[100]));
  }
  assert_true(std::isinf(round_trip(kF16, {70000.0f})[0]));  // beyond f16's range
  for (const Codec *c : {&kInt8Block, &kInt4Block}) {
    std::vector<float> out = round_trip(*c, values);
    for (size_t i = 0; i < values.size(); ++i) {
      const size_t block = i / c->block;
      const bool poisoned = block == 3 / c->block || block == 70 / c->block || block == 400 / c->block;
      if (poisoned != static_cast<bool>(std::isnan(out[i])))
        fail_msg("%s: index %zu is %g (block %zu %s)", c->name, i, out[i], block, poisoned ? "holds NaN/Inf" : "finite");
    }
  }
}

// Encoding is a pure function of the values: the same input gives the same bytes (what makes every
// rank decode the same mean).
void test_deterministic(void **) {
  std::vector<float> values = random_values(1000, 3, 2.0f);
  for (const Codec *c : kAll) {
    std::vector<unsigned char> a(c->encoded_size(values.size())), b(a.size());
    c->encode(values.data(), values.size(), a.data());
    c->encode(values.data(), values.size(), b.data());
    assert_memory_equal(a.data(), b.data(), a.size());
  }
}

// Whole blocks encode to contiguous bytes: a buffer encoded in pieces of whole blocks (as the WAN hop
// does, chunk by chunk) gives the bytes of the buffer encoded at once, and decodes piece by piece.
void test_pieces_concatenate(void **) {
  std::vector<float> values = random_values(3 * 1024 + 77, 11, 1.5f);
  for (const Codec *c : kAll) {
    std::vector<unsigned char> whole(c->encoded_size(values.size())), pieces(whole.size(), 0x5A);
    c->encode(values.data(), values.size(), whole.data());
    const size_t piece = 1024;  // a multiple of every block
    for (size_t first = 0; first < values.size(); first += piece) {
      const size_t n = values.size() - first < piece ? values.size() - first : piece;
      c->encode(values.data() + first, n, pieces.data() + c->encoded_size(first));
    }
    assert_memory_equal(whole.data(), pieces.data(), whole.size());
    std::vector<float> at_once(values.size()), by_piece(values.size());
    c->decode(whole.data(), values.size(), at_once.data());
    for (size_t first = 0; first < values.size(); first += piece) {
      const size_t n = values.size() - first < piece ? values.size() - first : piece;
      c->decode(whole.data() + c->encoded_size(first), n, by_piece.data() + first);
    }
    assert_memory_equal(at_once.data(), by_piece.data(), values.size() * sizeof(float));
  }
}

// Values that stress every step of the block formats' loops, in blocks of one kind each (a value of
// another kind in the same block would set its scale and hide the rest), by int8_block block (256):
// 0 ordinary values of mixed scale, and in every other one a value near the largest float;
// 1 ties of int8_block's rounding (scale 1: 127, then k + 1/2 for k in [-126, 125]);
// 2 ties of int4_block's rounding (each of its blocks at scale 1: -7, then k + 1/2 for k in [-6, 6]);
// 3 subnormals and signed zeros (a scale that is subnormal or underflows to 0).
// Plus NaN and -Inf in two blocks. kAwkwardTies8 and kAwkwardTies4 are the first blocks of kinds 1 and 2.
constexpr size_t kAwkwardTies8 = 256, kAwkwardTies4 = 512;
std::vector<float> awkward_values(size_t count, unsigned seed) {
  std::vector<float> values = random_values(count, seed, 0.5f);
  for (size_t i = 0; i < count; ++i) {
    const size_t kind = i / 256 % 4;
    if (kind == 0 && i % 97 == 0) values[i] *= 300.0f;
    if (kind == 0 && i % 256 == 100 && i / 256 % 8 == 4)
      values[i] = std::numeric_limits<float>::max() / static_cast<float>(1 + i % 3);
    if (kind == 1)
      values[i] = i % 256 == 0 ? 127.0f : static_cast<float>(static_cast<int>(i % 252) - 126) + 0.5f;
    if (kind == 2) values[i] = i % 64 == 0 ? -7.0f : static_cast<float>(static_cast<int>(i % 13) - 6) + 0.5f;
    if (kind == 3)
      values[i] = i % 7 == 0 ? -0.0f
                             : (i % 2 ? -1.0f : 1.0f) * std::numeric_limits<float>::denorm_min() *
                                   static_cast<float>(i % 200);
  }
  if (count > 1700) values[1700] = std::numeric_limits<float>::quiet_NaN();
  if (count > 2900) values[2900] = -std::numeric_limits<float>::infinity();
  return values;
}

// The awkward values are what they claim to be: their tie blocks encode at scale 1 and hold halves,
// so a copy that rounded ties another way than to even would write other bytes.
void test_awkward_values_hold_ties(void **) {
  const std::vector<float> values = awkward_values(4097, 1);
  std::vector<unsigned char> bytes(kInt8Block.encoded_size(values.size()));
  kInt8Block.encode(values.data(), values.size(), bytes.data());
  float scale;
  std::memcpy(&scale, bytes.data() + kInt8Block.encoded_size(kAwkwardTies8), sizeof scale);
  assert_true(scale == 1.0f);
  assert_true(values[kAwkwardTies8 + 1] - std::floor(values[kAwkwardTies8 + 1]) == 0.5f);
  bytes.assign(kInt4Block.encoded_size(values.size()), 0);
  kInt4Block.encode(values.data(), values.size(), bytes.data());
  std::memcpy(&scale, bytes.data() + kInt4Block.encoded_size(kAwkwardTies4 + 64), sizeof scale);
  assert_true(scale == 1.0f);
  assert_true(values[kAwkwardTies4 + 65] - std::floor(values[kAwkwardTies4 + 65]) == 0.5f);
}

// decode_add is decode into a scratch then one f32 addition per value, bit for bit, for every format,
// on sums that hold NaN, Inf and signed zeros too.
void test_decode_add_is_decode_then_add(void **) {
  for (size_t count : {size_t{1}, size_t{7}, size_t{64}, size_t{65}, size_t{257}, size_t{1000}, size_t{4097}}) {
    const std::vector<float> values = awkward_values(count, static_cast<unsigned>(count));
    std::vector<float> start = random_values(count, 99, 3.0f);
    if (count > 2) start[2] = -0.0f;
    for (const Codec *c : kAll) {
      std::vector<unsigned char> bytes(c->encoded_size(count));
      c->encode(values.data(), count, bytes.data());
      std::vector<float> decoded(count), expected(start), sum(start);
      c->decode(bytes.data(), count, decoded.data());
      for (size_t i = 0; i < count; ++i) expected[i] += decoded[i];
      c->decode_add(bytes.data(), count, sum.data());
      if (std::memcmp(sum.data(), expected.data(), count * sizeof(float)) != 0)
        fail_msg("%s, count %zu: decode_add differs from decode then add", c->name, count);
    }
  }
}

// The loops' baseline copy and their AVX2 copy (vector_isa.h) write the same bytes and the same floats,
// for every format and count, so facilities whose CPUs differ still decode the same mean. Skipped on a
// CPU without AVX2 (where only the baseline copy ever runs).
void test_vector_copies_agree(void **) {
  set_portable_vectors(false);
  if (!use_avx2()) skip();
  for (size_t count : {size_t{1}, size_t{7}, size_t{63}, size_t{64}, size_t{65}, size_t{255}, size_t{256},
                       size_t{257}, size_t{1000}, size_t{4097}, size_t{70001}}) {
    const std::vector<float> values = awkward_values(count, static_cast<unsigned>(count) + 1);
    const std::vector<float> start = random_values(count, 5, 1.0f);
    for (const Codec *c : kAll) {
      std::vector<unsigned char> bytes[2];
      std::vector<float> decoded[2], sums[2];
      for (int copy = 0; copy < 2; ++copy) {
        set_portable_vectors(copy == 0);
        bytes[copy].resize(c->encoded_size(count));
        c->encode(values.data(), count, bytes[copy].data());
        decoded[copy].resize(count);
        c->decode(bytes[copy].data(), count, decoded[copy].data());
        sums[copy] = start;
        c->decode_add(bytes[copy].data(), count, sums[copy].data());
      }
      set_portable_vectors(false);
      if (bytes[0] != bytes[1]) fail_msg("%s, count %zu: the AVX2 copy encodes other bytes", c->name, count);
      if (std::memcmp(decoded[0].data(), decoded[1].data(), count * sizeof(float)) != 0)
        fail_msg("%s, count %zu: the AVX2 copy decodes other floats", c->name, count);
      if (std::memcmp(sums[0].data(), sums[1].data(), count * sizeof(float)) != 0)
        fail_msg("%s, count %zu: the AVX2 copy adds other floats", c->name, count);
    }
  }
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_lookup_and_names), cmocka_unit_test(test_sizes),
      cmocka_unit_test(test_zero_count),       cmocka_unit_test(test_exact_values),
      cmocka_unit_test(test_error_bounds),     cmocka_unit_test(test_ties_to_even),
      cmocka_unit_test(test_zero_blocks),      cmocka_unit_test(test_non_finite),
      cmocka_unit_test(test_deterministic),    cmocka_unit_test(test_pieces_concatenate),
      cmocka_unit_test(test_awkward_values_hold_ties), cmocka_unit_test(test_decode_add_is_decode_then_add),
      cmocka_unit_test(test_vector_copies_agree),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
