// Test data and locally computed expected results for the collectives. Data are small integers
// (or +-1, +-2 for PROD), so every float sum and product is exact whatever the order: results can
// be compared bit for bit with the library's. The rules mirror comm/reduce.h: integer SUM/PROD wrap,
// AVG sums (i8/u8/i32 in i64) and divides once, truncating toward zero; f16/bf16 are averaged in
// f32 and rounded to nearest even once.
#ifndef XFFL_TESTS_UNIT_COMM_REFERENCE_H
#define XFFL_TESTS_UNIT_COMM_REFERENCE_H

#include <cstdint>
#include <cstring>
#include <vector>

#include "comm/dtype.h"
#include "comm/half.h"
#include "xffl/types.h"

namespace reference {

using Bytes = std::vector<unsigned char>;

// A value between -3 and 4 (0 to 7 for u8; +-1 or +-2 for PROD), different per member and index.
inline int small_value(int member, size_t index, xffl_dtype_t dtype, xffl_redop_t op) {
  const uint64_t mixed = (static_cast<uint64_t>(member) * 7919u + index * 104729u + 17u) * 2654435761u >> 7;
  if (op == XFFL_PROD) {
    const int magnitude = 1 + static_cast<int>(mixed % 2);
    return (dtype == XFFL_U8 || (mixed >> 3) % 2) ? magnitude : -magnitude;
  }
  if (dtype == XFFL_U8) return static_cast<int>(mixed % 8);
  return static_cast<int>(mixed % 8) - 3;
}

inline void store(unsigned char *at, xffl_dtype_t dtype, double value) {
  switch (dtype) {
    case XFFL_F32: { float v = static_cast<float>(value); std::memcpy(at, &v, 4); break; }
    case XFFL_F64: { std::memcpy(at, &value, 8); break; }
    case XFFL_F16: { uint16_t v = xffl::comm::f32_to_f16(static_cast<float>(value)); std::memcpy(at, &v, 2); break; }
    case XFFL_BF16: { uint16_t v = xffl::comm::f32_to_bf16(static_cast<float>(value)); std::memcpy(at, &v, 2); break; }
    case XFFL_I8: { int8_t v = static_cast<int8_t>(static_cast<int64_t>(value)); std::memcpy(at, &v, 1); break; }
    case XFFL_U8: { uint8_t v = static_cast<uint8_t>(static_cast<int64_t>(value)); std::memcpy(at, &v, 1); break; }
    case XFFL_I32: { int32_t v = static_cast<int32_t>(static_cast<int64_t>(value)); std::memcpy(at, &v, 4); break; }
    case XFFL_I64: { int64_t v = static_cast<int64_t>(value); std::memcpy(at, &v, 8); break; }
  }
}

inline Bytes make_input(int member, size_t count, xffl_dtype_t dtype, xffl_redop_t op) {
  const size_t element = xffl::comm::dtype_size(dtype);
  Bytes bytes(count * element);
  for (size_t i = 0; i < count; ++i) store(bytes.data() + i * element, dtype, small_value(member, i, dtype, op));
  return bytes;
}

inline bool is_float(xffl_dtype_t dtype) {
  return dtype == XFFL_F32 || dtype == XFFL_F64 || dtype == XFFL_F16 || dtype == XFFL_BF16;
}

// The reduction over members 0..n-1 of element index.
inline void reduce_element(unsigned char *out, int n, size_t index, xffl_dtype_t dtype, xffl_redop_t op) {
  if (is_float(dtype)) {
    double result = small_value(0, index, dtype, op);
    for (int m = 1; m < n; ++m) {
      const double v = small_value(m, index, dtype, op);
      if (op == XFFL_SUM || op == XFFL_AVG) result += v;
      if (op == XFFL_PROD) result *= v;
      if (op == XFFL_MIN && v < result) result = v;
      if (op == XFFL_MAX && v > result) result = v;
    }
    if (op == XFFL_AVG) {
      if (dtype == XFFL_F64) result = result / n;
      else result = static_cast<double>(static_cast<float>(result) / static_cast<float>(n));
    }
    store(out, dtype, result);
    return;
  }
  // Integers: wrap modulo 2^64, then keep the dtype's bits, which is wrapping in the dtype.
  uint64_t wrapped = static_cast<uint64_t>(static_cast<int64_t>(small_value(0, index, dtype, op)));
  int64_t extreme = small_value(0, index, dtype, op);
  for (int m = 1; m < n; ++m) {
    const int64_t v = small_value(m, index, dtype, op);
    if (op == XFFL_SUM || op == XFFL_AVG) wrapped += static_cast<uint64_t>(v);
    if (op == XFFL_PROD) wrapped *= static_cast<uint64_t>(v);
    if (op == XFFL_MIN && v < extreme) extreme = v;
    if (op == XFFL_MAX && v > extreme) extreme = v;
  }
  int64_t result = static_cast<int64_t>(wrapped);
  if (op == XFFL_MIN || op == XFFL_MAX) result = extreme;
  if (op == XFFL_AVG) result = result / n;  // exact i64 sum of small values, truncated toward zero
  store(out, dtype, static_cast<double>(result));
  if (op != XFFL_AVG && op != XFFL_MIN && op != XFFL_MAX) {
    const size_t element = xffl::comm::dtype_size(dtype);
    std::memcpy(out, &wrapped, element);  // little endian: the low bits are the wrapped value
  }
}

inline Bytes reduced(int n, size_t count, xffl_dtype_t dtype, xffl_redop_t op, size_t first = 0) {
  const size_t element = xffl::comm::dtype_size(dtype);
  Bytes bytes(count * element);
  for (size_t i = 0; i < count; ++i) reduce_element(bytes.data() + i * element, n, first + i, dtype, op);
  return bytes;
}

}  // namespace reference

#endif
