// XFFL_WIRE_INT8_BLOCK: blocks of 256 values, each an f32 scale then one signed byte per value in
// [-127, 127] (block_quantizer.h): 1.016 bytes per value, |error| <= max|x of the block| / 254.
#include <cstdint>

#include "federated/wire/block_quantizer.h"
#include "federated/wire/vector_isa.h"
#include "federated/wire/wire_format.h"

namespace xffl::federated::wire {

namespace {

constexpr size_t kBlock = 256;
constexpr int kLevels = 127;

size_t encoded_size(size_t count) { return block_count(count, kBlock) * sizeof(float) + count; }

XFFL_WIRE_INLINE void encode_values(const float *values, size_t count, unsigned char *out) {
  for (size_t first = 0; first < count; first += kBlock) {
    const size_t n = count - first < kBlock ? count - first : kBlock;
    const float scale = block_scale(values + first, n, kLevels);
    store_scale(out, scale);
    unsigned char *codes = out + sizeof(float);
    if (carries_codes(scale)) {
      for (size_t i = 0; i < n; ++i)
        codes[i] = static_cast<unsigned char>(static_cast<int8_t>(quantize(values[first + i], scale, kLevels)));
    } else {
      std::memset(codes, 0, n);
    }
    out = codes + n;
  }
}

// The decoded values, written (Add false) or added (Add true: values[i] += code * scale, the same
// bits as decoding into a scratch and adding).
template <bool Add>
XFFL_WIRE_INLINE void decode_values(const unsigned char *encoded, size_t count, float *values) {
  for (size_t first = 0; first < count; first += kBlock) {
    const size_t n = count - first < kBlock ? count - first : kBlock;
    const float scale = load_scale(encoded);
    const signed char *codes = reinterpret_cast<const signed char *>(encoded + sizeof(float));
    float *block = values + first;
    for (size_t i = 0; i < n; ++i) {
      const float value = static_cast<float>(codes[i]) * scale;
      block[i] = Add ? block[i] + value : value;
    }
    encoded += sizeof(float) + n;
  }
}

XFFL_WIRE_BLOCK_FORMAT_FUNCTIONS()

}  // namespace

const Codec kInt8Block = {XFFL_WIRE_INT8_BLOCK, "int8_block", encoded_size, encode, decode, decode_add,
                          0.5 / kLevels, kBlock};

}  // namespace xffl::federated::wire
