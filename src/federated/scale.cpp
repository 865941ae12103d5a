#include "federated/scale.h"

#include <cstdint>

#include "comm/dtype.h"
#include "common/error.h"

namespace xffl::federated {

namespace {
template <typename T>
void scale_typed(T *values, size_t count, T factor) {
  for (size_t i = 0; i < count; ++i) values[i] *= factor;
}
}  // namespace

void scale(void *buf, size_t count, xffl_dtype_t dtype, double factor) {
  switch (dtype) {
    case XFFL_F32: return scale_typed(static_cast<float *>(buf), count, static_cast<float>(factor));
    case XFFL_F64: return scale_typed(static_cast<double *>(buf), count, factor);
    default: break;
  }
  fail(XFFL_EINVAL, "weighted federated averaging needs a floating-point dtype, not ",
       comm::dtype_name(dtype), " (clear the weights for integer data)");
}

}  // namespace xffl::federated
