#include "comm/scale.h"

#include <cstdint>

#include "comm/dtype.h"
#include "comm/half.h"
#include "common/error.h"

namespace xffl::comm {

namespace {
template <typename T>
void scale_typed(T *values, size_t count, T factor) {
  for (size_t i = 0; i < count; ++i) values[i] *= factor;
}

// 16-bit floats: widen to f32, scale, narrow once (round to nearest even).
template <float (*widen)(uint16_t), uint16_t (*narrow)(float)>
void scale_half(uint16_t *values, size_t count, float factor) {
  for (size_t i = 0; i < count; ++i) values[i] = narrow(widen(values[i]) * factor);
}
}  // namespace

void scale(void *buf, size_t count, xffl_dtype_t dtype, double factor) {
  switch (dtype) {
    case XFFL_F32: return scale_typed(static_cast<float *>(buf), count, static_cast<float>(factor));
    case XFFL_F64: return scale_typed(static_cast<double *>(buf), count, factor);
    case XFFL_F16:
      return scale_half<f16_to_f32, f32_to_f16>(static_cast<uint16_t *>(buf), count,
                                                              static_cast<float>(factor));
    case XFFL_BF16:
      return scale_half<bf16_to_f32, f32_to_bf16>(static_cast<uint16_t *>(buf), count,
                                                                static_cast<float>(factor));
    default: break;
  }
  fail(XFFL_EINVAL, "scaling by a factor needs a floating-point dtype, not ", dtype_name(dtype));
}

}  // namespace xffl::comm
