// XFFL_WIRE_INT8_BLOCK: one f32 scale per block of 256 values, then one signed byte per value in
// [-127, 127] (block_quantizer.h): 1.016 bytes per value, |error| <= max|x of the block| / 254.
#include <cstdint>

#include "federated/wire/block_quantizer.h"
#include "federated/wire/wire_format.h"

namespace xffl::federated::wire {

namespace {

constexpr size_t kBlock = 256;
constexpr int kLevels = 127;

size_t encoded_size(size_t count) { return block_count(count, kBlock) * sizeof(float) + count; }

void encode(const float *values, size_t count, unsigned char *out) {
  const size_t blocks = block_count(count, kBlock);
  unsigned char *codes = out + blocks * sizeof(float);
  for (size_t b = 0; b < blocks; ++b) {
    const size_t first = b * kBlock, n = count - first < kBlock ? count - first : kBlock;
    const float scale = block_scale(values + first, n, kLevels);
    store_scale(out, b, scale);
    for (size_t i = 0; i < n; ++i) {
      const int code = carries_codes(scale) ? quantize(values[first + i], scale, kLevels) : 0;
      codes[first + i] = static_cast<unsigned char>(static_cast<int8_t>(code));
    }
  }
}

void decode(const unsigned char *encoded, size_t count, float *values) {
  const size_t blocks = block_count(count, kBlock);
  const unsigned char *codes = encoded + blocks * sizeof(float);
  for (size_t b = 0; b < blocks; ++b) {
    const size_t first = b * kBlock, n = count - first < kBlock ? count - first : kBlock;
    const float scale = load_scale(encoded, b);
    for (size_t i = 0; i < n; ++i)
      values[first + i] = static_cast<float>(static_cast<int8_t>(codes[first + i])) * scale;
  }
}

}  // namespace

const Codec kInt8Block = {XFFL_WIRE_INT8_BLOCK, "int8_block", encoded_size, encode, decode, 0.5 / kLevels, kBlock};

}  // namespace xffl::federated::wire
