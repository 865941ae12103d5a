#include "federated/wire/wan_hop.h"

#include <cmath>
#include <cstring>
#include <vector>

#include "common/error.h"
#include "federated/wire/error_feedback.h"
#include "federated/wire/hop_scratch.h"
#include "federated/wire/wire_format.h"

namespace xffl::federated::wire {

bool compresses(const Roles &roles, size_t count, xffl_dtype_t dtype) {
  return roles.wire_format != XFFL_WIRE_F32 && dtype == XFFL_F32 && roles.federated_groups > 1 && count > 0;
}

void require_supported(const Roles &roles, xffl_dtype_t dtype) {
  if (roles.device_memory && !roles.host_crossing && roles.wire_format != XFFL_WIRE_F32 && dtype == XFFL_F32 &&
      roles.federated_groups > 1)
    fail(XFFL_EUNSUPPORTED, "wire format ", format_name(roles.wire_format),
         " quantises on the host: device buffers (backend NCCL) whose FEDERATED groups run on NCCL cross "
         "facilities in f32 only; set XFFL_OPT_WIRE_FORMAT to XFFL_WIRE_F32 (0), or carry the crossing groups "
         "over a host backend (XFFL_OPT_CROSS_FACILITY_BACKEND)");
}

namespace {

// Values per step of the host loops: whole blocks of every format (256 and 64), small enough that a
// step's f32 scratch stays in cache, so no full-size f32 copy of the buffer is ever made.
constexpr size_t kChunk = 16384;
// Values per step of the mean's decoding: one int8_block block, the largest (and 4 of int4_block), so
// a step's sum (1 KiB) stays in L1 while every member's bytes are added to it and it is divided: a
// third less time than steps of kChunk (bench/facilities/README.md).
constexpr size_t kMeanStep = 256;
static_assert(kChunk % kMeanStep == 0, "mean steps are whole blocks of every format, and tile the chunks");
// Values per window of the relay to non-senders (cross_and_relay): whole steps, one message of the
// relay's chain (algorithm_choice::ring_chunk_bytes of f32); the non-senders pass the same.
constexpr size_t kRelayValues = kChunk * 16;
// Values per window of the crossing on host memory (CompressedHop::cross): whole steps; a 4th of the
// crossing's 1 MiB message in f32, so that a message of any format leaves once a few windows are
// encoded. Device memory crosses in the staging's windows (kStagedWindowValues, wan_hop.h).
constexpr size_t kCrossValues = kChunk * 4;
constexpr size_t kStagedValues = kStagedWindowValues;
static_assert(kStagedValues % kChunk == 0, "staged windows are whole steps");

// One compressed hop's host work, step by step: values[0, n) are the buffer's elements [first, first + n),
// first a multiple of kChunk, so each step's bytes sit at encoded_size(first + step) (wire_format.h).
class CompressedHop {
 public:
  CompressedHop(const Roles &roles, size_t count)
      : roles_(roles), format_(codec(roles.wire_format)), members_(static_cast<size_t>(roles.federated_groups)),
        encoded_(format_.encoded_size(count)),
        residual_(roles.error_feedback ? &roles.error_feedback->next(count) : nullptr), meant_(kChunk),
        decoded_(kChunk) {
    // This member's bytes, then every member's, in the state's kept scratch (hop_scratch.h).
    HopScratch &scratch = roles.hop_scratch ? *roles.hop_scratch : own_scratch_;
    mine_ = scratch.get(encoded_ * (members_ + 1));
    all_ = mine_ + encoded_;
  }

  // 1. What this member means to send (its weighted copy plus the residual of its last round), encoded
  //    once; 4. with error feedback, the new residual: what was meant minus what was sent.
  void encode(const float *values, size_t first, size_t n) {
    for (size_t step = 0; step < n; step += kChunk) {
      const size_t at = first + step;
      const size_t m = n - step < kChunk ? n - step : kChunk;
      unsigned char *bytes = mine_ + format_.encoded_size(at);  // chunks of whole blocks: contiguous
      const float *from = values + step;
      if (roles_.weight_factor == 1.0 && !residual_) {  // the values are what is meant: no copy
        format_.encode(from, m, bytes);
        continue;
      }
      // Three plain loops rather than one with branches inside: each vectorises.
      float *meant = meant_.data();
      if (roles_.weight_factor == 1.0) {
        std::memcpy(meant, from, m * sizeof(float));
      } else {
        const double factor = roles_.weight_factor;
        for (size_t i = 0; i < m; ++i) meant[i] = static_cast<float>(static_cast<double>(from[i]) * factor);
      }
      if (residual_) {
        const float *carried = residual_->data() + at;
        for (size_t i = 0; i < m; ++i) meant[i] += carried[i];
      }
      format_.encode(meant_.data(), m, bytes);
      if (!residual_) continue;
      format_.decode(bytes, m, decoded_.data());
      for (size_t i = 0; i < m; ++i) {
        // A non-finite value (a NaN block) is not carried: the next round starts clean where it went.
        const float left = meant_[i] - decoded_[i];
        (*residual_)[at + i] = std::isfinite(left) ? left : 0.0f;
      }
    }
  }

  // 1 to 3, overlapped (2: every member's bytes, in member order, over `wan`, host memory), in windows
  // of `window` values (whole steps, so each window's bytes start at encoded_size of its first value):
  // encode_window(first, n) encodes values [first, first + n) just before their bytes leave (through
  // encode), and decode_window(first, n) decodes them as soon as every member's bytes of them have
  // arrived (through decode_mean) (Communicator::allgather_streamed), so that the coding runs while the
  // link is busy. A window is decoded only after it was encoded and sent.
  template <typename EncodeWindow, typename DecodeWindow>
  void cross(comm::Communicator &wan, size_t count, size_t window, EncodeWindow encode_window,
             DecodeWindow decode_window, void *stream) {
    const size_t window_bytes = format_.encoded_size(window);
    const auto values_of = [&](size_t first_byte, size_t *n) {
      const size_t first = first_byte / window_bytes * window;
      *n = count - first < window ? count - first : window;
      return first;
    };
    wan.allgather_streamed(
        mine_, all_, encoded_, XFFL_U8, window_bytes,
        [&](size_t first_byte, size_t) {
          size_t n = 0;
          const size_t first = values_of(first_byte, &n);
          encode_window(first, n);
        },
        [&](size_t first_byte, size_t) {
          size_t n = 0;
          const size_t first = values_of(first_byte, &n);
          decode_window(first, n);
        },
        stream);
  }

  // 3. Sum in f32 in member order, then the mean, into out[0, n).
  void decode_mean(size_t first, size_t n, float *out) {
    const float size = static_cast<float>(members_);
    for (size_t step = 0; step < n; step += kMeanStep) {
      const size_t m = n - step < kMeanStep ? n - step : kMeanStep;
      const size_t offset = format_.encoded_size(first + step);
      float *sum = out + step;
      format_.decode(all_ + offset, m, sum);
      for (size_t g = 1; g < members_; ++g) format_.decode_add(all_ + g * encoded_ + offset, m, sum);
      for (size_t i = 0; i < m; ++i) sum[i] /= size;
    }
  }

 private:
  const Roles &roles_;
  const Codec &format_;
  size_t members_;
  size_t encoded_;
  std::vector<float> *residual_;
  std::vector<float> meant_, decoded_;
  HopScratch own_scratch_;  // only when the roles bring none (tests that make roles by hand)
  unsigned char *mine_ = nullptr;
  unsigned char *all_ = nullptr;
};

// Device memory through the FEDERATED communicator's host staging: the hop streams as on host memory,
// in windows of the staging buffer: each window of the buffer is copied to host memory and encoded as
// its bytes are about to leave over the host communicator, and each window of the mean is decoded on
// the host and copied back as soon as its bytes are in. The residuals stay on the host.
void cross_staged(const Roles &roles, comm::HostStaging &staging, float *values, size_t count, void *stream) {
  CompressedHop hop(roles, count);
  const size_t window = count < kStagedValues ? count : kStagedValues;
  // One scratch for both directions: each use ends before the next begins (the copies are complete
  // when they return, and the host communicator's call leaves the staging's scratch alone).
  float *host = static_cast<float *>(staging.host_scratch(window * sizeof(float)));
  hop.cross(
      staging.host(), count, window,
      [&](size_t first, size_t n) {
        staging.to_host(host, values + first, n * sizeof(float), stream);
        hop.encode(host, first, n);
      },
      [&](size_t first, size_t n) {
        hop.decode_mean(first, n, host);
        staging.to_device(values + first, host, n * sizeof(float), stream);
      },
      nullptr);
}

// Host memory: the mean replaces values[0, count), window by window as it is decoded.
void cross_in_place(const Roles &roles, CompressedHop &hop, float *values, size_t count, void *stream) {
  hop.cross(
      *roles.federated, count, kCrossValues, [&](size_t first, size_t n) { hop.encode(values + first, first, n); },
      [&](size_t first, size_t n) { hop.decode_mean(first, n, values + first); }, stream);
}

}  // namespace

void cross_facilities(const Roles &roles, void *buf, size_t count, xffl_dtype_t dtype, void *stream) {
  if (!compresses(roles, count, dtype)) {
    roles.federated->allreduce_scaled(buf, count, dtype, XFFL_AVG, roles.weight_factor, stream);
    return;
  }
  float *values = static_cast<float *>(buf);
  if (roles.device_memory) {
    comm::HostStaging *staging = roles.federated->host_staging();
    // require_supported let it through (host_crossing), so every crossing group is staged: a group that
    // is not was made against the backend's word.
    if (!staging)
      fail(XFFL_EINTERNAL, "wire format ", format_name(roles.wire_format),
           ": the FEDERATED group's communicator holds device memory but offers no host staging");
    cross_staged(roles, *staging, values, count, stream);
    return;
  }
  CompressedHop hop(roles, count);
  cross_in_place(roles, hop, values, count, stream);
}

void cross_and_relay(const Roles &roles, void *buf, size_t count, xffl_dtype_t dtype, void *stream) {
  comm::Communicator &relay = *roles.replica;
  if (!roles.is_sender) {
    relay.broadcast_produced(buf, count, dtype, roles.sender_index, kRelayValues, {}, stream);
    return;
  }
  // A hop that fails ends the relay's waits with its error (abort_broadcast), not with their timeout.
  const auto relaying_failure = [&](const Error &error) {
    relay.abort_broadcast(roles.sender_index, count, dtype, error);
  };
  if (roles.device_memory) {  // the staged hop decodes as it copies back: the relay follows it
    try {
      cross_facilities(roles, buf, count, dtype, stream);
    } catch (const Error &error) {
      relaying_failure(error);
      throw;
    }
    relay.broadcast_produced(buf, count, dtype, roles.sender_index, kRelayValues, {}, stream);
    return;
  }
  float *values = static_cast<float *>(buf);
  CompressedHop hop(roles, count);
  try {
    cross_in_place(roles, hop, values, count, stream);
  } catch (const Error &error) {
    relaying_failure(error);
    throw;
  }
  relay.broadcast_produced(buf, count, dtype, roles.sender_index, kRelayValues, {}, stream);
}

}  // namespace xffl::federated::wire
