#include "comm/half.h"

#include <cstring>

namespace xffl::comm {

namespace {

inline uint32_t bits_of(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

inline float float_of(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

// After F. Giesen's half_to_float: rebias the exponent; Inf/NaN get the f32 maximum exponent and
// subnormals are normalised by one float subtraction (exact).
inline float half_to_float(uint16_t half) {
  const uint32_t shifted_exponent = 0x7c00u << 13;
  uint32_t bits = (static_cast<uint32_t>(half) & 0x7fffu) << 13;
  const uint32_t exponent = bits & shifted_exponent;
  bits += (127u - 15u) << 23;
  const uint32_t inf_or_nan = bits + ((128u - 16u) << 23);
  const uint32_t subnormal = bits_of(float_of(bits + (1u << 23)) - float_of(113u << 23));
  bits = exponent == shifted_exponent ? inf_or_nan : (exponent == 0 ? subnormal : bits);
  return float_of(bits | (static_cast<uint32_t>(half) & 0x8000u) << 16);
}

// After F. Giesen's float_to_half_fast3_rtne: subnormal results are rounded by the FPU through a
// magic addition; normal ones by adding half an ulp minus one plus the lowest kept bit (ties to even).
inline uint16_t float_to_half(float value) {
  const uint32_t f32_infinity = 255u << 23;
  const uint32_t f16_overflow = (127u + 16u) << 23;
  const uint32_t denormal_magic = ((127u - 15u) + (23u - 10u) + 1u) << 23;
  uint32_t bits = bits_of(value);
  const uint32_t sign = bits & 0x80000000u;
  bits ^= sign;
  const uint32_t special = bits > f32_infinity ? 0x7e00u : 0x7c00u;
  const uint32_t subnormal = bits_of(float_of(bits) + float_of(denormal_magic)) - denormal_magic;
  const uint32_t odd_mantissa = (bits >> 13) & 1u;
  const uint32_t normal = (bits + ((15u - 127u) << 23) + 0xfffu + odd_mantissa) >> 13;
  const uint32_t result = bits >= f16_overflow ? special : (bits < (113u << 23) ? subnormal : normal);
  return static_cast<uint16_t>(result | sign >> 16);
}

inline float brain_to_float(uint16_t half) { return float_of(static_cast<uint32_t>(half) << 16); }

inline uint16_t float_to_brain(float value) {
  const uint32_t bits = bits_of(value);
  const bool is_nan = (bits & 0x7fffffffu) > 0x7f800000u;
  const uint32_t rounded = (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
  return static_cast<uint16_t>(is_nan ? (bits >> 16) | 0x40u : rounded);
}

}  // namespace

float f16_to_f32(uint16_t half) { return half_to_float(half); }
uint16_t f32_to_f16(float value) { return float_to_half(value); }
float bf16_to_f32(uint16_t half) { return brain_to_float(half); }
uint16_t f32_to_bf16(float value) { return float_to_brain(value); }

void f16_to_f32(const uint16_t *__restrict from, float *__restrict to, size_t count) {
  for (size_t i = 0; i < count; ++i) to[i] = half_to_float(from[i]);
}

void f32_to_f16(const float *__restrict from, uint16_t *__restrict to, size_t count) {
  for (size_t i = 0; i < count; ++i) to[i] = float_to_half(from[i]);
}

void bf16_to_f32(const uint16_t *__restrict from, float *__restrict to, size_t count) {
  for (size_t i = 0; i < count; ++i) to[i] = brain_to_float(from[i]);
}

void f32_to_bf16(const float *__restrict from, uint16_t *__restrict to, size_t count) {
  for (size_t i = 0; i < count; ++i) to[i] = float_to_brain(from[i]);
}

}  // namespace xffl::comm
