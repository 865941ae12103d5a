// XFFL_WIRE_BF16: the upper 16 bits of each f32, rounded to nearest even (comm/half.h): 8 significant
// bits (7 stored), so |error| <= 2^-8 |x|, over f32's whole range.
#include <cstring>
#include <vector>

#include "comm/half.h"
#include "federated/wire/wire_format.h"

namespace xffl::federated::wire {

namespace {

size_t encoded_size(size_t count) { return count * sizeof(uint16_t); }
void encode(const float *values, size_t count, unsigned char *out) {
  std::vector<uint16_t> halves(count);  // `out` may be unaligned
  comm::f32_to_bf16(values, halves.data(), count);
  if (count) std::memcpy(out, halves.data(), count * sizeof(uint16_t));
}
void decode(const unsigned char *encoded, size_t count, float *values) {
  std::vector<uint16_t> halves(count);
  if (count) std::memcpy(halves.data(), encoded, count * sizeof(uint16_t));
  comm::bf16_to_f32(halves.data(), values, count);
}

}  // namespace

const Codec kBf16 = {XFFL_WIRE_BF16, "bf16", encoded_size, encode, decode, 1.0 / 256, 0};

}  // namespace xffl::federated::wire
