// XFFL_WIRE_INT4_BLOCK: one f32 scale per block of 64 values, then two values per byte (the even index
// in the low nibble), each a 4-bit two's complement code in [-7, 7] (block_quantizer.h): 0.5625 bytes
// per value, |error| <= max|x of the block| / 14. Streaming DiLoCo sends 4-bit outer gradients; with
// error feedback the error does not accumulate.
#include "federated/wire/block_quantizer.h"
#include "federated/wire/wire_format.h"

namespace xffl::federated::wire {

namespace {

constexpr size_t kBlock = 64;
constexpr int kLevels = 7;

size_t encoded_size(size_t count) { return block_count(count, kBlock) * sizeof(float) + (count + 1) / 2; }

void encode(const float *values, size_t count, unsigned char *out) {
  const size_t blocks = block_count(count, kBlock);
  unsigned char *codes = out + blocks * sizeof(float);
  for (size_t i = 0; i < (count + 1) / 2; ++i) codes[i] = 0;
  for (size_t b = 0; b < blocks; ++b) {
    const size_t first = b * kBlock, n = count - first < kBlock ? count - first : kBlock;
    const float scale = block_scale(values + first, n, kLevels);
    store_scale(out, b, scale);
    if (!carries_codes(scale)) continue;
    for (size_t i = first; i < first + n; ++i) {
      const unsigned nibble = static_cast<unsigned>(quantize(values[i], scale, kLevels)) & 0xFu;
      codes[i / 2] = static_cast<unsigned char>(codes[i / 2] | (i % 2 ? nibble << 4 : nibble));
    }
  }
}

void decode(const unsigned char *encoded, size_t count, float *values) {
  const size_t blocks = block_count(count, kBlock);
  const unsigned char *codes = encoded + blocks * sizeof(float);
  for (size_t b = 0; b < blocks; ++b) {
    const size_t first = b * kBlock, n = count - first < kBlock ? count - first : kBlock;
    const float scale = load_scale(encoded, b);
    for (size_t i = first; i < first + n; ++i) {
      const int nibble = (i % 2 ? codes[i / 2] >> 4 : codes[i / 2]) & 0xF;
      values[i] = static_cast<float>(nibble >= 8 ? nibble - 16 : nibble) * scale;
    }
  }
}

}  // namespace

const Codec kInt4Block = {XFFL_WIRE_INT4_BLOCK, "int4_block", encoded_size, encode, decode, 0.5 / kLevels, kBlock};

}  // namespace xffl::federated::wire
