// What the block formats (int8_block.cpp, int4_block.cpp) share: symmetric quantisation with one f32
// scale per block of values. The encoding is [one f32 scale per block][the codes]; a block's scale is
// max|x| / levels, codes are round(x / scale) to nearest even, clamped to [-levels, levels], so
// |x - code * scale| <= scale / 2 = max|x| / (2 levels). A block of zeros (or of values so small that
// the scale underflows to 0) has scale 0 and decodes as zeros; a block holding a NaN or an Inf has a
// NaN scale and decodes as NaN.
#ifndef XFFL_SRC_FEDERATED_WIRE_BLOCK_QUANTIZER_H
#define XFFL_SRC_FEDERATED_WIRE_BLOCK_QUANTIZER_H

#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>

namespace xffl::federated::wire {

inline size_t block_count(size_t count, size_t block) { return (count + block - 1) / block; }

// The scale of values[0, n): max|x| / levels; NaN when a value is not finite.
inline float block_scale(const float *values, size_t n, int levels) {
  float largest = 0.0f;
  for (size_t i = 0; i < n; ++i) {
    if (!std::isfinite(values[i])) return std::numeric_limits<float>::quiet_NaN();
    largest = std::fmax(largest, std::fabs(values[i]));
  }
  return largest / static_cast<float>(levels);
}

// The code of `value` under `scale` (finite and positive): nearest even, clamped to +-levels.
inline int quantize(float value, float scale, int levels) {
  float code = std::nearbyint(value / scale);  // the default rounding mode: to nearest, ties to even
  if (code > static_cast<float>(levels)) code = static_cast<float>(levels);
  if (code < -static_cast<float>(levels)) code = -static_cast<float>(levels);
  return static_cast<int>(code);
}

// Whether a block under `scale` carries codes: a zero or NaN scale writes zeros (NaN decodes as NaN anyway).
inline bool carries_codes(float scale) { return scale > 0.0f && std::isfinite(scale); }

inline void store_scale(unsigned char *out, size_t index, float scale) {
  std::memcpy(out + index * sizeof(float), &scale, sizeof(float));
}
inline float load_scale(const unsigned char *encoded, size_t index) {
  float scale;
  std::memcpy(&scale, encoded + index * sizeof(float), sizeof(float));
  return scale;
}

}  // namespace xffl::federated::wire

#endif
