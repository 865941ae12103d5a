// The frame on a cross-facility stream: a 32-byte header, the payload, and with encryption a 16-byte
// tag (the header is the AEAD's additional data). A message (one send of PointToPoint) is cut into
// frames of at most kFrameBytes, each naming its message by its key (call, step, index) and its
// place by offset, so frames may cross on different streams and are reassembled by offset. The top
// byte of the payload size's word carries the call's check (call_arguments.h's call_check: 8 bits of
// its arguments), so that members whose calls differ only where the message sizes agree are told.
#ifndef XFFL_SRC_COMM_WAN_FRAMING_H
#define XFFL_SRC_COMM_WAN_FRAMING_H

#include <array>
#include <cstddef>
#include <cstdint>

namespace xffl::comm::wan {

constexpr uint32_t kFrameMagic = 0x58574631;  // "XWF1"
constexpr size_t kHeaderBytes = 32;

struct FrameHeader {
  uint32_t payload_bytes = 0;  // below 2^24 (kFrameBytes)
  uint8_t call_check = 0;
  uint64_t message = 0;  // the message's key (StripedLinks::message_key): call, step, index in the step
  uint64_t offset = 0;   // of the payload in the message
  uint64_t total = 0;    // bytes of the whole message
};

using HeaderBytes = std::array<uint8_t, kHeaderBytes>;

inline void put_le(uint8_t *out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out[i] = static_cast<uint8_t>(value >> (8 * i));
}
inline uint64_t get_le(const uint8_t *in, int bytes) {
  uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) value |= static_cast<uint64_t>(in[i]) << (8 * i);
  return value;
}

inline HeaderBytes encode(const FrameHeader &header) {
  HeaderBytes out{};
  put_le(out.data(), kFrameMagic, 4);
  put_le(out.data() + 4, (header.payload_bytes & 0xffffffu) | (static_cast<uint32_t>(header.call_check) << 24), 4);
  put_le(out.data() + 8, header.message, 8);
  put_le(out.data() + 16, header.offset, 8);
  put_le(out.data() + 24, header.total, 8);
  return out;
}

// False when the magic is wrong (the stream lost its framing).
inline bool decode(const uint8_t *in, FrameHeader *header) {
  if (get_le(in, 4) != kFrameMagic) return false;
  const uint32_t size_word = static_cast<uint32_t>(get_le(in + 4, 4));
  header->payload_bytes = size_word & 0xffffffu;
  header->call_check = static_cast<uint8_t>(size_word >> 24);
  header->message = get_le(in + 8, 8);
  header->offset = get_le(in + 16, 8);
  header->total = get_le(in + 24, 8);
  return true;
}

}  // namespace xffl::comm::wan

#endif
