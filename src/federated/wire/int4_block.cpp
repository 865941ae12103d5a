// XFFL_WIRE_INT4_BLOCK: blocks of 64 values, each an f32 scale then two values per byte (the even index
// in the low nibble), each a 4-bit two's complement code in [-7, 7] (block_quantizer.h): 0.5625 bytes
// per value, |error| <= max|x of the block| / 14. Streaming DiLoCo sends 4-bit outer gradients: meant
// for updates (pseudo-gradients) more than whole weights; with error feedback the error does not
// accumulate.
#include "federated/wire/block_quantizer.h"
#include "federated/wire/wire_format.h"

namespace xffl::federated::wire {

namespace {

constexpr size_t kBlock = 64;
constexpr int kLevels = 7;

size_t encoded_size(size_t count) { return block_count(count, kBlock) * sizeof(float) + (count + 1) / 2; }

void encode(const float *values, size_t count, unsigned char *out) {
  for (size_t first = 0; first < count; first += kBlock) {
    const size_t n = count - first < kBlock ? count - first : kBlock;
    const float scale = block_scale(values + first, n, kLevels);
    store_scale(out, scale);
    unsigned char *codes = out + sizeof(float);
    const size_t bytes = (n + 1) / 2;
    if (carries_codes(scale)) {
      for (size_t j = 0; j < bytes; ++j) {
        const unsigned low = static_cast<unsigned>(quantize(values[first + 2 * j], scale, kLevels)) & 0xFu;
        const unsigned high =
            2 * j + 1 < n ? static_cast<unsigned>(quantize(values[first + 2 * j + 1], scale, kLevels)) & 0xFu : 0u;
        codes[j] = static_cast<unsigned char>(low | high << 4);
      }
    } else {
      std::memset(codes, 0, bytes);
    }
    out = codes + bytes;
  }
}

void decode(const unsigned char *encoded, size_t count, float *values) {
  for (size_t first = 0; first < count; first += kBlock) {
    const size_t n = count - first < kBlock ? count - first : kBlock;
    const float scale = load_scale(encoded);
    const unsigned char *codes = encoded + sizeof(float);
    for (size_t i = 0; i < n; ++i) {
      const int nibble = (i % 2 ? codes[i / 2] >> 4 : codes[i / 2]) & 0xF;
      values[first + i] = static_cast<float>(nibble >= 8 ? nibble - 16 : nibble) * scale;
    }
    encoded = codes + (n + 1) / 2;
  }
}

}  // namespace

const Codec kInt4Block = {XFFL_WIRE_INT4_BLOCK, "int4_block", encoded_size, encode, decode, 0.5 / kLevels, kBlock};

}  // namespace xffl::federated::wire
