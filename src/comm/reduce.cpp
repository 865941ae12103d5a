#include "comm/reduce.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "comm/dtype.h"
#include "comm/half.h"
#include "comm/wide_vectors.h"
#include "common/error.h"

namespace xffl::comm {

namespace {

// Signed integers add and multiply through their unsigned twin: wrap-around instead of UB.
template <typename T>
struct Sum {
  static T apply(T left, T right) {
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      return static_cast<T>(static_cast<U>(static_cast<U>(left) + static_cast<U>(right)));
    } else {
      return left + right;
    }
  }
};

template <typename T>
struct Prod {
  static T apply(T left, T right) {
    if constexpr (std::is_integral_v<T>) {
      using U = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;
      return static_cast<T>(static_cast<U>(left) * static_cast<U>(right));
    } else {
      return left * right;
    }
  }
};

// The shape of x86's minps/maxps, so the compiler can use them: a NaN on the left is kept.
template <typename T>
struct Min {
  static T apply(T left, T right) { return right < left ? right : left; }
};

template <typename T>
struct Max {
  static T apply(T left, T right) { return right > left ? right : left; }
};

// The loops, inlined into both copies of combine_typed (a loop left out of line would run with the
// baseline instructions in the AVX-512 copy too).
template <typename T, typename Op>
XFFL_ALWAYS_INLINE void combine_distinct(T *__restrict out, const T *__restrict left, const T *__restrict right,
                                         size_t count) {
  for (size_t i = 0; i < count; ++i) out[i] = Op::apply(left[i], right[i]);
}

template <typename T, typename Op>
XFFL_ALWAYS_INLINE void combine_into_left(T *__restrict left_and_out, const T *__restrict right, size_t count) {
  for (size_t i = 0; i < count; ++i) left_and_out[i] = Op::apply(left_and_out[i], right[i]);
}

template <typename T, typename Op>
XFFL_ALWAYS_INLINE void combine_into_right(T *__restrict right_and_out, const T *__restrict left, size_t count) {
  for (size_t i = 0; i < count; ++i) right_and_out[i] = Op::apply(left[i], right_and_out[i]);
}

template <typename T, typename Op>
XFFL_ALWAYS_INLINE void combine_aliased(T *out, const T *left, const T *right, size_t count) {
  if (out == left && out == right) {
    for (size_t i = 0; i < count; ++i) out[i] = Op::apply(out[i], out[i]);
  } else if (out == left) {
    combine_into_left<T, Op>(out, right, count);
  } else if (out == right) {
    combine_into_right<T, Op>(out, left, count);
  } else {
    combine_distinct<T, Op>(out, left, right, count);
  }
}

template <typename T, typename Op>
void combine_baseline(T *out, const T *left, const T *right, size_t count) {
  combine_aliased<T, Op>(out, left, right, count);
}

#if XFFL_HAS_AVX512_COPY
template <typename T, typename Op>
XFFL_AVX512 void combine_avx512(T *out, const T *left, const T *right, size_t count) {
  combine_aliased<T, Op>(out, left, right, count);
}
#endif

template <typename T, typename Op>
void combine_typed(void *out_raw, const void *left_raw, const void *right_raw, size_t count) {
  T *out = static_cast<T *>(out_raw);
  const T *left = static_cast<const T *>(left_raw);
  const T *right = static_cast<const T *>(right_raw);
#if XFFL_HAS_AVX512_COPY
  if (use_avx512_for(count * sizeof(T))) return combine_avx512<T, Op>(out, left, right, count);
#endif
  combine_baseline<T, Op>(out, left, right, count);
}

template <typename T>
void combine_op(void *out, const void *left, const void *right, size_t count, xffl_redop_t op) {
  switch (op) {
    case XFFL_SUM:
    case XFFL_AVG: return combine_typed<T, Sum<T>>(out, left, right, count);
    case XFFL_PROD: return combine_typed<T, Prod<T>>(out, left, right, count);
    case XFFL_MIN: return combine_typed<T, Min<T>>(out, left, right, count);
    case XFFL_MAX: return combine_typed<T, Max<T>>(out, left, right, count);
  }
  fail(XFFL_EINTERNAL, "combine: unknown reduction ", static_cast<int>(op));
}

template <typename T>
void divide_typed(void *raw, size_t count, int divisor) {
  T *__restrict values = static_cast<T *>(raw);
  const T by = static_cast<T>(divisor);
  for (size_t i = 0; i < count; ++i) values[i] = static_cast<T>(values[i] / by);
}

template <typename From, typename To>
void convert_typed(const void *from_raw, void *to_raw, size_t count) {
  const From *__restrict from = static_cast<const From *>(from_raw);
  To *__restrict to = static_cast<To *>(to_raw);
  for (size_t i = 0; i < count; ++i) to[i] = static_cast<To>(from[i]);
}

}  // namespace

xffl_dtype_t accumulation_dtype(xffl_dtype_t dtype, xffl_redop_t op) {
  switch (dtype) {
    case XFFL_F16:
    case XFFL_BF16: return XFFL_F32;
    case XFFL_I8:
    case XFFL_U8:
    case XFFL_I32: return op == XFFL_AVG ? XFFL_I64 : dtype;
    default: return dtype;
  }
}

void combine(void *out, const void *left, const void *right, size_t count, xffl_dtype_t type, xffl_redop_t op) {
  if (count == 0) return;
  switch (type) {
    case XFFL_F32: return combine_op<float>(out, left, right, count, op);
    case XFFL_F64: return combine_op<double>(out, left, right, count, op);
    case XFFL_I8: return combine_op<int8_t>(out, left, right, count, op);
    case XFFL_U8: return combine_op<uint8_t>(out, left, right, count, op);
    case XFFL_I32: return combine_op<int32_t>(out, left, right, count, op);
    case XFFL_I64: return combine_op<int64_t>(out, left, right, count, op);
    case XFFL_F16:
    case XFFL_BF16: break;
  }
  fail(XFFL_EINTERNAL, "combine: ", dtype_name(type), " is reduced in its accumulation type, not directly");
}

void divide(void *values, size_t count, xffl_dtype_t type, int divisor) {
  if (count == 0 || divisor == 1) return;
  switch (type) {
    case XFFL_F32: return divide_typed<float>(values, count, divisor);
    case XFFL_F64: return divide_typed<double>(values, count, divisor);
    case XFFL_I8: return divide_typed<int8_t>(values, count, divisor);
    case XFFL_U8: return divide_typed<uint8_t>(values, count, divisor);
    case XFFL_I32: return divide_typed<int32_t>(values, count, divisor);
    case XFFL_I64: return divide_typed<int64_t>(values, count, divisor);
    case XFFL_F16:
    case XFFL_BF16: break;
  }
  fail(XFFL_EINTERNAL, "divide: ", dtype_name(type), " is averaged in its accumulation type");
}

void convert(const void *from, xffl_dtype_t from_type, void *to, xffl_dtype_t to_type, size_t count) {
  if (count == 0) return;
  if (from_type == to_type) {
    if (from != to) std::memmove(to, from, count * dtype_size(from_type));
    return;
  }
  const auto *half_in = static_cast<const uint16_t *>(from);
  auto *half_out = static_cast<uint16_t *>(to);
  if (from_type == XFFL_F16 && to_type == XFFL_F32) return f16_to_f32(half_in, static_cast<float *>(to), count);
  if (from_type == XFFL_BF16 && to_type == XFFL_F32) return bf16_to_f32(half_in, static_cast<float *>(to), count);
  if (from_type == XFFL_F32 && to_type == XFFL_F16) return f32_to_f16(static_cast<const float *>(from), half_out, count);
  if (from_type == XFFL_F32 && to_type == XFFL_BF16) return f32_to_bf16(static_cast<const float *>(from), half_out, count);
  if (to_type == XFFL_I64) {
    if (from_type == XFFL_I8) return convert_typed<int8_t, int64_t>(from, to, count);
    if (from_type == XFFL_U8) return convert_typed<uint8_t, int64_t>(from, to, count);
    if (from_type == XFFL_I32) return convert_typed<int32_t, int64_t>(from, to, count);
  }
  if (from_type == XFFL_I64) {
    if (to_type == XFFL_I8) return convert_typed<int64_t, int8_t>(from, to, count);
    if (to_type == XFFL_U8) return convert_typed<int64_t, uint8_t>(from, to, count);
    if (to_type == XFFL_I32) return convert_typed<int64_t, int32_t>(from, to, count);
  }
  fail(XFFL_EINTERNAL, "convert: no conversion from ", dtype_name(from_type), " to ", dtype_name(to_type));
}

}  // namespace xffl::comm
