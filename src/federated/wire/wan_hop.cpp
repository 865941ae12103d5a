#include "federated/wire/wan_hop.h"

#include <cmath>
#include <vector>

#include "common/error.h"
#include "federated/wire/error_feedback.h"
#include "federated/wire/wire_format.h"

namespace xffl::federated::wire {

bool compresses(const Roles &roles, size_t count, xffl_dtype_t dtype) {
  return roles.wire_format != XFFL_WIRE_F32 && dtype == XFFL_F32 && roles.federated_groups > 1 && count > 0;
}

void require_supported(const Roles &roles, xffl_dtype_t dtype) {
  if (roles.device_memory && roles.wire_format != XFFL_WIRE_F32 && dtype == XFFL_F32 && roles.federated_groups > 1)
    fail(XFFL_EUNSUPPORTED, "wire format ", format_name(roles.wire_format),
         " quantises on the host: device buffers (backend NCCL) cross facilities in f32 only; set "
         "XFFL_OPT_WIRE_FORMAT to XFFL_WIRE_F32 (0)");
}

void cross_facilities(const Roles &roles, void *buf, size_t count, xffl_dtype_t dtype, void *stream) {
  if (!compresses(roles, count, dtype)) {
    roles.federated->allreduce_scaled(buf, count, dtype, XFFL_AVG, roles.weight_factor, stream);
    return;
  }
  const Codec &format = codec(roles.wire_format);
  float *values = static_cast<float *>(buf);
  const size_t members = static_cast<size_t>(roles.federated_groups);

  // 1. What this member means to send: its weighted copy, plus the residual of its last round.
  std::vector<float> input(values, values + count);
  if (roles.weight_factor != 1.0)
    for (float &x : input) x = static_cast<float>(static_cast<double>(x) * roles.weight_factor);
  std::vector<float> *residual = roles.error_feedback ? &roles.error_feedback->next(count) : nullptr;
  if (residual)
    for (size_t i = 0; i < count; ++i) input[i] += (*residual)[i];
  const size_t encoded = format.encoded_size(count);
  std::vector<unsigned char> mine(encoded);
  format.encode(input.data(), count, mine.data());

  // 2. Every member's bytes, in member order.
  std::vector<unsigned char> all(encoded * members);
  roles.federated->allgather(mine.data(), all.data(), encoded, XFFL_U8, stream);

  // 4 first, while `input` is at hand: what was meant minus what was sent.
  std::vector<float> decoded(count);
  if (residual) {
    format.decode(mine.data(), count, decoded.data());
    for (size_t i = 0; i < count; ++i) {
      // A non-finite value (a NaN block) is not carried: the next round starts clean where it went.
      const float left = input[i] - decoded[i];
      (*residual)[i] = std::isfinite(left) ? left : 0.0f;
    }
  }
  // 3. Sum in f32 in member order, then the mean.
  format.decode(all.data(), count, values);
  for (size_t g = 1; g < members; ++g) {
    format.decode(all.data() + g * encoded, count, decoded.data());
    for (size_t i = 0; i < count; ++i) values[i] += decoded[i];
  }
  const float size = static_cast<float>(members);
  for (size_t i = 0; i < count; ++i) values[i] /= size;
}

}  // namespace xffl::federated::wire
