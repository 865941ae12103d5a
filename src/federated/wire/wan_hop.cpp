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

namespace {

// Values per step of the host loops: whole blocks of every format (256 and 64), small enough that a
// step's f32 scratch stays in cache, so no full-size f32 copy of the buffer is ever made.
constexpr size_t kChunk = 16384;

}  // namespace

void cross_facilities(const Roles &roles, void *buf, size_t count, xffl_dtype_t dtype, void *stream) {
  if (!compresses(roles, count, dtype)) {
    roles.federated->allreduce_scaled(buf, count, dtype, XFFL_AVG, roles.weight_factor, stream);
    return;
  }
  const Codec &format = codec(roles.wire_format);
  float *values = static_cast<float *>(buf);
  const size_t members = static_cast<size_t>(roles.federated_groups);
  std::vector<float> *residual = roles.error_feedback ? &roles.error_feedback->next(count) : nullptr;
  std::vector<float> meant(kChunk), decoded(kChunk);

  // 1. What this member means to send (its weighted copy plus the residual of its last round),
  //    encoded once; 4. with error feedback, the new residual: what was meant minus what was sent.
  const size_t encoded = format.encoded_size(count);
  std::vector<unsigned char> all(encoded * members);
  std::vector<unsigned char> mine(encoded);
  for (size_t first = 0; first < count; first += kChunk) {
    const size_t n = count - first < kChunk ? count - first : kChunk;
    unsigned char *bytes = mine.data() + format.encoded_size(first);  // chunks of whole blocks: contiguous
    for (size_t i = 0; i < n; ++i) {
      meant[i] = roles.weight_factor == 1.0
                     ? values[first + i]
                     : static_cast<float>(static_cast<double>(values[first + i]) * roles.weight_factor);
      if (residual) meant[i] += (*residual)[first + i];
    }
    format.encode(meant.data(), n, bytes);
    if (!residual) continue;
    format.decode(bytes, n, decoded.data());
    for (size_t i = 0; i < n; ++i) {
      // A non-finite value (a NaN block) is not carried: the next round starts clean where it went.
      const float left = meant[i] - decoded[i];
      (*residual)[first + i] = std::isfinite(left) ? left : 0.0f;
    }
  }

  // 2. Every member's bytes, in member order.
  roles.federated->allgather(mine.data(), all.data(), encoded, XFFL_U8, stream);

  // 3. Sum in f32 in member order, then the mean.
  const float size = static_cast<float>(members);
  for (size_t first = 0; first < count; first += kChunk) {
    const size_t n = count - first < kChunk ? count - first : kChunk;
    const size_t offset = format.encoded_size(first);
    float *sum = values + first;
    format.decode(all.data() + offset, n, sum);
    for (size_t g = 1; g < members; ++g) {
      format.decode(all.data() + g * encoded + offset, n, decoded.data());
      for (size_t i = 0; i < n; ++i) sum[i] += decoded[i];
    }
    for (size_t i = 0; i < n; ++i) sum[i] /= size;
  }
}

}  // namespace xffl::federated::wire
