// buf[i] *= factor for floating-point dtypes (f16 and bf16 through f32).
#ifndef XFFL_SRC_COMM_SCALE_H
#define XFFL_SRC_COMM_SCALE_H

#include <cstddef>

#include "xffl/types.h"

namespace xffl::comm {

void scale(void *buf, size_t count, xffl_dtype_t dtype, double factor);

}  // namespace xffl::comm

#endif
