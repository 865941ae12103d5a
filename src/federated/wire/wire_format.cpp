#include "federated/wire/wire_format.h"

namespace xffl::federated::wire {

bool valid_format(int format) { return format >= XFFL_WIRE_F32 && format <= XFFL_WIRE_INT4_BLOCK; }

const Codec &codec(xffl_wire_format_t format) {
  switch (format) {
    case XFFL_WIRE_BF16: return kBf16;
    case XFFL_WIRE_F16: return kF16;
    case XFFL_WIRE_INT8_BLOCK: return kInt8Block;
    case XFFL_WIRE_INT4_BLOCK: return kInt4Block;
    case XFFL_WIRE_F32: break;
  }
  return kF32;
}

const char *format_name(int format) {
  return valid_format(format) ? codec(static_cast<xffl_wire_format_t>(format)).name : "unknown";
}

}  // namespace xffl::federated::wire
