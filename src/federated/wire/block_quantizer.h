// What the block formats (int8_block.cpp, int4_block.cpp) share: symmetric quantisation with one f32
// scale per block of values. Each block is written as [its f32 scale][its codes], so the bytes of
// whole blocks are contiguous and a run of blocks can be encoded or decoded on its own (wan_hop.cpp
// works in chunks of whole blocks). A block's scale is max|x| / levels, codes are x / scale rounded to
// nearest, ties to even, clamped to [-levels, levels], so |x - code * scale| <= scale / 2 =
// max|x| / (2 levels) (plus the f32 rounding of the product). A block of zeros (or of values so small
// that the scale underflows to 0) has scale 0 and decodes as zeros; a block holding a NaN or an Inf has
// a NaN scale and decodes as NaN.
#ifndef XFFL_SRC_FEDERATED_WIRE_BLOCK_QUANTIZER_H
#define XFFL_SRC_FEDERATED_WIRE_BLOCK_QUANTIZER_H

#include <cfloat>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>

#include "federated/wire/vector_isa.h"

namespace xffl::federated::wire {

XFFL_WIRE_INLINE size_t block_count(size_t count, size_t block) { return (count + block - 1) / block; }

// The scale of values[0, n): max|x| / levels; NaN when a value is not finite. The largest magnitude
// is found on the values' bits with the sign cleared: for non-negative floats the bits order as
// unsigned integers do, with Inf and then every NaN above FLT_MAX, so one integer maximum (which
// vectorises, where a float maximum may not without -ffast-math) gives both the magnitude and
// whether any value is not finite.
XFFL_WIRE_INLINE float block_scale(const float *values, size_t n, int levels) {
  uint32_t largest = 0;
  for (size_t i = 0; i < n; ++i) {
    uint32_t bits;
    std::memcpy(&bits, &values[i], sizeof bits);
    bits &= 0x7fffffffu;
    largest = bits > largest ? bits : largest;
  }
  float magnitude;
  std::memcpy(&magnitude, &largest, sizeof magnitude);
  if (!(magnitude <= FLT_MAX)) return std::numeric_limits<float>::quiet_NaN();
  return magnitude / static_cast<float>(levels);
}

// Whether a block under `scale` carries codes: a zero or NaN scale writes zeros (NaN decodes as NaN anyway).
XFFL_WIRE_INLINE bool carries_codes(float scale) { return scale > 0.0f && std::isfinite(scale); }

// The code of `value` under `scale` (finite and positive): value / scale rounded to nearest, ties to
// even, clamped to +-levels. Adding and subtracting 1.5 * 2^23 rounds a float of magnitude below 2^22
// to an integer in the default rounding mode (to nearest, ties to even), without a library call; the
// quotient is at most levels * (1 + 2^-23) here.
XFFL_WIRE_INLINE int quantize(float value, float scale, int levels) {
  constexpr float kRound = 12582912.0f;  // 1.5 * 2^23
  float code = (value / scale + kRound) - kRound;
  const float top = static_cast<float>(levels);
  code = code > top ? top : code;
  code = code < -top ? -top : code;
  return static_cast<int>(code);
}

// Defines encode, decode and decode_add, each with its baseline and AVX2 copy (vector_isa.h), from the
// format's loop bodies: encode_values(values, count, out) and decode_values<Add>(encoded, count, values)
// (Add: values[i] += the decoded value, else values[i] = it).
#define XFFL_WIRE_BLOCK_FORMAT_FUNCTIONS()                                                              \
  XFFL_WIRE_VECTOR_COPIES(encode, encode_values, (const float *values, size_t count, unsigned char *out), \
                          (values, count, out))                                                         \
  XFFL_WIRE_VECTOR_COPIES(decode, decode_values<false>,                                                 \
                          (const unsigned char *encoded, size_t count, float *values), (encoded, count, values)) \
  XFFL_WIRE_VECTOR_COPIES(decode_add, decode_values<true>,                                              \
                          (const unsigned char *encoded, size_t count, float *sum), (encoded, count, sum))

XFFL_WIRE_INLINE void store_scale(unsigned char *at, float scale) { std::memcpy(at, &scale, sizeof(float)); }
XFFL_WIRE_INLINE float load_scale(const unsigned char *at) {
  float scale;
  std::memcpy(&scale, at, sizeof(float));
  return scale;
}

}  // namespace xffl::federated::wire

#endif
