// XFFL_WIRE_F32: the values as they are (the codec for tests and symmetry; the WAN hop itself takes
// the exact f32 allreduce for F32, unchanged).
#include <cstring>

#include "federated/wire/wire_format.h"

namespace xffl::federated::wire {

namespace {

size_t encoded_size(size_t count) { return count * sizeof(float); }
void encode(const float *values, size_t count, unsigned char *out) {
  if (count) std::memcpy(out, values, count * sizeof(float));
}
void decode(const unsigned char *encoded, size_t count, float *values) {
  if (count) std::memcpy(values, encoded, count * sizeof(float));
}

void decode_add(const unsigned char *encoded, size_t count, float *sum) {
  decode_add_through(decode, encoded_size, encoded, count, sum);
}

}  // namespace

const Codec kF32 = {XFFL_WIRE_F32, "f32", encoded_size, encode, decode, decode_add, 0.0, 0};

}  // namespace xffl::federated::wire
