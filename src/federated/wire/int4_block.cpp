// XFFL_WIRE_INT4_BLOCK: blocks of 64 values, each an f32 scale then two values per byte (the even index
// in the low nibble), each a 4-bit two's complement code in [-7, 7] (block_quantizer.h): 0.5625 bytes
// per value, |error| <= max|x of the block| / 14. Streaming DiLoCo sends 4-bit outer gradients: meant
// for updates (pseudo-gradients) more than whole weights; with error feedback the error does not
// accumulate.
#include "federated/wire/block_quantizer.h"
#include "federated/wire/vector_isa.h"
#include "federated/wire/wire_format.h"

namespace xffl::federated::wire {

namespace {

constexpr size_t kBlock = 64;
constexpr int kLevels = 7;

// A 4-bit two's complement code (0..15) as the integer it stands for (-8..7), without a branch.
XFFL_WIRE_INLINE int signed_nibble(int nibble) { return (nibble ^ 8) - 8; }

size_t encoded_size(size_t count) { return block_count(count, kBlock) * sizeof(float) + (count + 1) / 2; }

XFFL_WIRE_INLINE void encode_values(const float *values, size_t count, unsigned char *out) {
  for (size_t first = 0; first < count; first += kBlock) {
    const size_t n = count - first < kBlock ? count - first : kBlock;
    const float scale = block_scale(values + first, n, kLevels);
    store_scale(out, scale);
    unsigned char *codes = out + sizeof(float);
    const size_t bytes = (n + 1) / 2;
    if (carries_codes(scale)) {
      const float *block = values + first;
      const size_t pairs = n / 2;  // whole bytes first, without a test per value (the loop vectorises)
      for (size_t j = 0; j < pairs; ++j) {
        const unsigned low = static_cast<unsigned>(quantize(block[2 * j], scale, kLevels)) & 0xFu;
        const unsigned high = static_cast<unsigned>(quantize(block[2 * j + 1], scale, kLevels)) & 0xFu;
        codes[j] = static_cast<unsigned char>(low | high << 4);
      }
      if (n % 2)
        codes[pairs] = static_cast<unsigned char>(static_cast<unsigned>(quantize(block[n - 1], scale, kLevels)) & 0xFu);
    } else {
      std::memset(codes, 0, bytes);
    }
    out = codes + bytes;
  }
}

// The decoded values, written (Add false) or added (Add true: values[i] += code * scale, the same
// bits as decoding into a scratch and adding).
template <bool Add>
XFFL_WIRE_INLINE void decode_values(const unsigned char *encoded, size_t count, float *values) {
  for (size_t first = 0; first < count; first += kBlock) {
    const size_t n = count - first < kBlock ? count - first : kBlock;
    const float scale = load_scale(encoded);
    const unsigned char *codes = encoded + sizeof(float);
    float *block = values + first;
    const size_t pairs = n / 2;
    for (size_t j = 0; j < pairs; ++j) {
      const float low = static_cast<float>(signed_nibble(codes[j] & 0xF)) * scale;
      const float high = static_cast<float>(signed_nibble(codes[j] >> 4)) * scale;
      block[2 * j] = Add ? block[2 * j] + low : low;
      block[2 * j + 1] = Add ? block[2 * j + 1] + high : high;
    }
    if (n % 2) {
      const float last = static_cast<float>(signed_nibble(codes[pairs] & 0xF)) * scale;
      block[n - 1] = Add ? block[n - 1] + last : last;
    }
    encoded = codes + (n + 1) / 2;
  }
}

XFFL_WIRE_BLOCK_FORMAT_FUNCTIONS()

}  // namespace

const Codec kInt4Block = {XFFL_WIRE_INT4_BLOCK, "int4_block", encoded_size, encode, decode, decode_add,
                          0.5 / kLevels, kBlock};

}  // namespace xffl::federated::wire
