// The pairing hello of xffl-relay (tools/xffl-relay): what a rank sends its facility's relay, or a
// peer's relay, before anything else on a relayed stream, so that the relay can pair the two
// connections of one stream and splice them. After the relay's answer the two ranks run the wan
// handshake of wan_hub.h through it, end to end: the relay needs no job secret, never sees one, and
// with encryption on sees only ciphertext. It can drop or delay bytes, never forge or read them (the
// handshake's HMAC proofs and the frames' AEAD tags fail first).
//
//   rank -> relay:  magic "XFFLRLY1" | side | caller rank | owner rank | group tag | group serial |
//                   stream | streams | job digest (16 bytes)                       (kRelayHelloBytes)
//   relay -> rank:  status | seconds                                                (kRelayReplyBytes)
//
// Integers are little-endian; ranks and counts are u32, tag and serial u64. `side` says which end
// of the stream the sender is: the caller is the rank that would dial (it speaks first in the wan
// handshake), the owner the rank whose relay it is (it answers, as the acceptor would). The pairing
// key is every field but side and streams; the relay pairs one caller with one owner of the same key.
// The job digest is the first 16 bytes of SHA-256(XFFL_JOB_ID), so that two jobs that share a relay
// never pair (the relay learns no more of the job's name than that).
#ifndef XFFL_SRC_COMM_WAN_RELAY_HELLO_H
#define XFFL_SRC_COMM_WAN_RELAY_HELLO_H

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>

namespace xffl::comm::wan {

constexpr uint64_t kRelayMagic = 0x31594c524c464658ULL;  // "XFFLRLY1"
constexpr size_t kRelayJobDigestBytes = 16;
constexpr size_t kRelayHelloBytes = 8 + 4 + 4 + 4 + 8 + 8 + 4 + 4 + kRelayJobDigestBytes;  // 60
constexpr size_t kRelayReplyBytes = 8;
// The most streams a hello may name (wan_settings.h's kMaxStreams).
constexpr uint32_t kRelayMaxStreams = 64;

enum class RelaySide : uint32_t { kCaller = 0, kOwner = 1 };

// What the relay answers before splicing, or instead of it.
enum class RelayStatus : uint32_t {
  kPaired = 0,     // the other side came: from the next byte on, the relay forwards both ways
  kDuplicate = 1,  // a connection of the same side and key is already waiting: this one is refused
  kUnpaired = 2,   // the other side did not come within `seconds` (the relay's --pair-timeout)
  kFull = 3,       // the relay holds its --max-connections already
};

using RelayJobDigest = std::array<uint8_t, kRelayJobDigestBytes>;

struct RelayHello {
  RelaySide side = RelaySide::kCaller;
  uint32_t caller = 0;
  uint32_t owner = 0;
  uint64_t tag = 0;
  uint64_t serial = 0;
  uint32_t stream = 0;
  uint32_t streams = 1;
  RelayJobDigest job{};

  // The pairing key: every field but side and streams.
  auto key() const { return std::make_tuple(job, tag, serial, caller, owner, stream); }
};

using RelayHelloBytes = std::array<uint8_t, kRelayHelloBytes>;

RelayHelloBytes encode_relay_hello(const RelayHello &hello);
// nullopt, with why (when not null), for anything but a well-formed hello: another magic, a side other
// than 0 or 1, a rank or count at or above 2^31, caller equal to owner, no streams or more than
// kRelayMaxStreams, a stream not below streams.
std::optional<RelayHello> decode_relay_hello(const uint8_t *bytes, std::string *why = nullptr);

std::array<uint8_t, kRelayReplyBytes> encode_relay_reply(RelayStatus status, uint32_t seconds);
// false for a status the library does not know.
bool decode_relay_reply(const uint8_t *bytes, RelayStatus *status, uint32_t *seconds);
const char *relay_status_text(RelayStatus status);

// "host:port" split, for XFFL_WAN_RELAY and xffl-relay's --listen: a non-empty host (no spaces) and a
// port in [1, 65535] ([0, 65535] with allow_zero). False, with why, otherwise.
bool split_host_port(const std::string &text, bool allow_zero, std::string *host, int *port, std::string *why);

}  // namespace xffl::comm::wan

#endif
