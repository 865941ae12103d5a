// XFFL_WIRE_F16: IEEE binary16, rounded to nearest even (comm/half.h): 11 bits of mantissa, so
// |error| <= 2^-11 |x| for normal halves (|x| in [2^-14, 65504]); smaller values lose precision
// (subnormal halves, absolute error <= 2^-25), larger ones become +-Inf. For weights and updates of
// ordinary scale (OpenDiLoCo sends fp16 pseudo-gradients).
#include <cstring>
#include <vector>

#include "comm/half.h"
#include "federated/wire/wire_format.h"

namespace xffl::federated::wire {

namespace {

size_t encoded_size(size_t count) { return count * sizeof(uint16_t); }
void encode(const float *values, size_t count, unsigned char *out) {
  std::vector<uint16_t> halves(count);  // `out` may be unaligned
  comm::f32_to_f16(values, halves.data(), count);
  if (count) std::memcpy(out, halves.data(), count * sizeof(uint16_t));
}
void decode(const unsigned char *encoded, size_t count, float *values) {
  std::vector<uint16_t> halves(count);
  if (count) std::memcpy(halves.data(), encoded, count * sizeof(uint16_t));
  comm::f16_to_f32(halves.data(), values, count);
}

}  // namespace

const Codec kF16 = {XFFL_WIRE_F16, "f16", encoded_size, encode, decode, 1.0 / 2048, 0};

}  // namespace xffl::federated::wire
