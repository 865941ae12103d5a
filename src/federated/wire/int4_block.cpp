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
      // Two plain loops, each of which vectorises: the nibbles one per byte, then packed in pairs (a
      // single loop over pairs reads the values two by two, which vectorises worse).
      const float *block = values + first;
      unsigned char nibbles[kBlock + 1];
      for (size_t i = 0; i < n; ++i) nibbles[i] = static_cast<unsigned char>(quantize(block[i], scale, kLevels) & 0xF);
      nibbles[n] = 0;  // the high nibble of an odd block's last byte
      for (size_t j = 0; j < bytes; ++j)
        codes[j] = static_cast<unsigned char>(nibbles[2 * j] | nibbles[2 * j + 1] << 4);
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
    const size_t bytes = (n + 1) / 2;
    // Two plain loops, as in encode: the codes one per byte, then each value from its own.
    signed char signed_codes[kBlock + 1];
    for (size_t j = 0; j < bytes; ++j) {
      signed_codes[2 * j] = static_cast<signed char>(signed_nibble(codes[j] & 0xF));
      signed_codes[2 * j + 1] = static_cast<signed char>(signed_nibble(codes[j] >> 4));
    }
    for (size_t i = 0; i < n; ++i) {
      const float value = static_cast<float>(signed_codes[i]) * scale;
      block[i] = Add ? block[i] + value : value;
    }
    encoded = codes + bytes;
  }
}

XFFL_WIRE_BLOCK_FORMAT_FUNCTIONS()

}  // namespace

const Codec kInt4Block = {XFFL_WIRE_INT4_BLOCK, "int4_block", encoded_size, encode, decode, decode_add,
                          0.5 / kLevels, kBlock};

}  // namespace xffl::federated::wire
