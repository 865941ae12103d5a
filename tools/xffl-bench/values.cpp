#include "values.h"

#include <cmath>
#include <cstdint>
#include <cstring>

namespace xffl_bench {
namespace {

// bf16 is the high half of an f32; the values stored here are exact in it.
uint16_t to_bf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return static_cast<uint16_t>(bits >> 16);
}

float from_bf16(uint16_t h) {
  uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// Only for the small non-negative integers that contributions are: exact, no rounding needed.
uint16_t to_f16(float f) {
  if (f == 0.0f) return 0;
  int exponent = 0;
  float mantissa = std::frexp(f, &exponent);  // f = mantissa * 2^exponent, mantissa in [0.5, 1)
  const auto fraction = static_cast<uint16_t>((mantissa * 2.0f - 1.0f) * 1024.0f + 0.5f);
  return static_cast<uint16_t>(((exponent - 1 + 15) << 10) | fraction);
}

float from_f16(uint16_t h) {
  const int exponent = (h >> 10) & 0x1f;
  const int fraction = h & 0x3ff;
  float value = exponent == 0 ? std::ldexp(static_cast<float>(fraction), -24)
                              : std::ldexp(1.0f + static_cast<float>(fraction) / 1024.0f, exponent - 15);
  return (h & 0x8000) ? -value : value;
}

bool is_integer(xffl_dtype_t dtype) {
  return dtype == XFFL_I8 || dtype == XFFL_U8 || dtype == XFFL_I32 || dtype == XFFL_I64;
}

void store(void *buf, size_t i, xffl_dtype_t dtype, double v) {
  switch (dtype) {
    case XFFL_F32: static_cast<float *>(buf)[i] = static_cast<float>(v); break;
    case XFFL_F64: static_cast<double *>(buf)[i] = v; break;
    case XFFL_F16: static_cast<uint16_t *>(buf)[i] = to_f16(static_cast<float>(v)); break;
    case XFFL_BF16: static_cast<uint16_t *>(buf)[i] = to_bf16(static_cast<float>(v)); break;
    case XFFL_I8: static_cast<int8_t *>(buf)[i] = static_cast<int8_t>(v); break;
    case XFFL_U8: static_cast<uint8_t *>(buf)[i] = static_cast<uint8_t>(v); break;
    case XFFL_I32: static_cast<int32_t *>(buf)[i] = static_cast<int32_t>(v); break;
    case XFFL_I64: static_cast<int64_t *>(buf)[i] = static_cast<int64_t>(v); break;
  }
}

}  // namespace

double contribution(int source, size_t i, xffl_redop_t redop) {
  const size_t s = static_cast<size_t>(source < 0 ? -source : source);
  if (redop == XFFL_PROD) return (s + i) % 8 == 0 ? 2.0 : 1.0;  // products stay small for up to 8 twos
  return static_cast<double>((s * 7 + i * 3) % 4);
}

void fill(void *buf, size_t count, xffl_dtype_t dtype, int source, size_t first, xffl_redop_t redop) {
  for (size_t k = 0; k < count; ++k) store(buf, k, dtype, contribution(source, first + k, redop));
}

double reduced(const std::vector<int> &sources, size_t i, xffl_redop_t redop, xffl_dtype_t dtype) {
  double acc = contribution(sources.front(), i, redop);
  for (size_t k = 1; k < sources.size(); ++k) {
    const double v = contribution(sources[k], i, redop);
    switch (redop) {
      case XFFL_SUM: case XFFL_AVG: acc += v; break;
      case XFFL_MIN: acc = std::fmin(acc, v); break;
      case XFFL_MAX: acc = std::fmax(acc, v); break;
      case XFFL_PROD: acc *= v; break;
    }
  }
  if (redop == XFFL_AVG) {
    acc /= static_cast<double>(sources.size());
    if (is_integer(dtype)) acc = std::trunc(acc);
  }
  return acc;
}

double load(const void *buf, size_t i, xffl_dtype_t dtype) {
  switch (dtype) {
    case XFFL_F32: return static_cast<const float *>(buf)[i];
    case XFFL_F64: return static_cast<const double *>(buf)[i];
    case XFFL_F16: return from_f16(static_cast<const uint16_t *>(buf)[i]);
    case XFFL_BF16: return from_bf16(static_cast<const uint16_t *>(buf)[i]);
    case XFFL_I8: return static_cast<const int8_t *>(buf)[i];
    case XFFL_U8: return static_cast<const uint8_t *>(buf)[i];
    case XFFL_I32: return static_cast<const int32_t *>(buf)[i];
    case XFFL_I64: return static_cast<double>(static_cast<const int64_t *>(buf)[i]);
  }
  return NAN;
}

bool matches(double got, double want, xffl_dtype_t dtype) {
  const double tolerance = dtype == XFFL_F16 || dtype == XFFL_BF16 ? 1e-2
                           : dtype == XFFL_F32                     ? 1e-6
                           : dtype == XFFL_F64                     ? 1e-12
                                                                   : 0.0;
  return std::fabs(got - want) <= tolerance * std::fmax(1.0, std::fabs(want));
}

}  // namespace xffl_bench
