#include "comm/dtype.h"

namespace xffl::comm {

bool valid_dtype(int dtype) { return dtype >= XFFL_F32 && dtype <= XFFL_I64; }
bool valid_redop(int op) { return op >= XFFL_SUM && op <= XFFL_PROD; }

bool is_floating(xffl_dtype_t dtype) {
  return dtype == XFFL_F32 || dtype == XFFL_F64 || dtype == XFFL_F16 || dtype == XFFL_BF16;
}

size_t dtype_size(xffl_dtype_t dtype) {
  switch (dtype) {
    case XFFL_F32: return 4;
    case XFFL_F64: return 8;
    case XFFL_F16: return 2;
    case XFFL_BF16: return 2;
    case XFFL_I8: return 1;
    case XFFL_U8: return 1;
    case XFFL_I32: return 4;
    case XFFL_I64: return 8;
  }
  return 0;
}

const char *dtype_name(xffl_dtype_t dtype) {
  switch (dtype) {
    case XFFL_F32: return "f32";
    case XFFL_F64: return "f64";
    case XFFL_F16: return "f16";
    case XFFL_BF16: return "bf16";
    case XFFL_I8: return "i8";
    case XFFL_U8: return "u8";
    case XFFL_I32: return "i32";
    case XFFL_I64: return "i64";
  }
  return "unknown";
}

const char *redop_name(xffl_redop_t op) {
  switch (op) {
    case XFFL_SUM: return "sum";
    case XFFL_AVG: return "avg";
    case XFFL_MIN: return "min";
    case XFFL_MAX: return "max";
    case XFFL_PROD: return "prod";
  }
  return "unknown";
}

}  // namespace xffl::comm
