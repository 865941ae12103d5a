// Sizes and names of the element types.
#ifndef XFFL_SRC_COMM_DTYPE_H
#define XFFL_SRC_COMM_DTYPE_H

#include <cstddef>

#include "xffl/types.h"

namespace xffl::comm {

bool valid_dtype(int dtype);
bool valid_redop(int op);
bool is_floating(xffl_dtype_t dtype);  // f32, f64, f16, bf16
size_t dtype_size(xffl_dtype_t dtype);
const char *dtype_name(xffl_dtype_t dtype);
const char *redop_name(xffl_redop_t op);

}  // namespace xffl::comm

#endif
