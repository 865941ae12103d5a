#include "federated/wire/wire_format.h"

namespace xffl::federated::wire {

void decode_add_through(void (*decode)(const unsigned char *, size_t, float *), size_t (*encoded_size)(size_t),
                        const unsigned char *encoded, size_t count, float *sum) {
  constexpr size_t kStep = 2048;
  float decoded[kStep];
  for (size_t first = 0; first < count; first += kStep) {
    const size_t n = count - first < kStep ? count - first : kStep;
    decode(encoded + encoded_size(first), n, decoded);
    for (size_t i = 0; i < n; ++i) sum[first + i] += decoded[i];
  }
}

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
