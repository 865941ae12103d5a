// XFFL_WIRE_BF16: the upper 16 bits of each f32, rounded to nearest even (comm/half.h): 8 significant
// bits (7 stored), so |error| <= 2^-8 |x|, over f32's whole range.
#include <cstring>

#include "comm/half.h"
#include "federated/wire/wire_format.h"

namespace xffl::federated::wire {

namespace {

// Converted through a small buffer on the stack: `out` and `encoded` may be unaligned, and no copy of
// the whole array is made.
constexpr size_t kChunk = 4096;

size_t encoded_size(size_t count) { return count * sizeof(uint16_t); }
void encode(const float *values, size_t count, unsigned char *out) {
  uint16_t halves[kChunk];
  for (size_t first = 0; first < count; first += kChunk) {
    const size_t n = count - first < kChunk ? count - first : kChunk;
    comm::f32_to_bf16(values + first, halves, n);
    std::memcpy(out + first * sizeof(uint16_t), halves, n * sizeof(uint16_t));
  }
}
void decode(const unsigned char *encoded, size_t count, float *values) {
  uint16_t halves[kChunk];
  for (size_t first = 0; first < count; first += kChunk) {
    const size_t n = count - first < kChunk ? count - first : kChunk;
    std::memcpy(halves, encoded + first * sizeof(uint16_t), n * sizeof(uint16_t));
    comm::bf16_to_f32(halves, values + first, n);
  }
}

void decode_add(const unsigned char *encoded, size_t count, float *sum) {
  decode_add_through(decode, encoded_size, encoded, count, sum);
}

}  // namespace

const Codec kBf16 = {XFFL_WIRE_BF16, "bf16", encoded_size, encode, decode, decode_add, 1.0 / 256, 0};

}  // namespace xffl::federated::wire
