// The built-in federation server's wire protocol (tools/xffl-federation, xffl_store.h).
//
// A frame is a 12-byte header, then a bounded payload:
//   offset 0  u32 magic 'XFFD'   offset 4  u16 version   offset 6  u16 type   offset 8  u32 length
// Integers are big-endian; payload fields are written with bootstrap/wire.h's PayloadWriter and read
// with its PayloadReader, which checks every length. A header with a wrong magic, version or type, or
// a length beyond kMaxPayload, is rejected as soon as it has arrived (the server closes the connection).
//
// Conversation:
//   client  Hello{client nonce}
//   server  Challenge{server nonce}
//   client  Auth{HMAC(secret, "xffl-federation/1 client" | client nonce | server nonce)}
//   server  Welcome{HMAC(secret, "xffl-federation/1 server" | ...)} or Failure{XFFL_EAUTH} and closes
//   then requests, each answered by its own reply type or by Failure{status, message}.
// A server without a secret accepts any proof and answers with a zero proof; a client with a secret
// then refuses the server (mutual authentication, as the rendezvous store does).
#ifndef XFFL_SRC_FEDERATION_FEDERATION_PROTOCOL_H
#define XFFL_SRC_FEDERATION_FEDERATION_PROTOCOL_H

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bootstrap/wire.h"
#include "federation/membership_store.h"
#include "xffl/types.h"

namespace xffl::federation::protocol {

constexpr uint32_t kMagic = 0x58464644;  // "XFFD"
constexpr uint16_t kVersion = 1;
constexpr size_t kHeaderSize = 12;
// Large enough for a put of the largest value and for listings of a few such entries.
constexpr size_t kMaxPayload = 4 * kMaxValue;
constexpr size_t kMaxText = 4096;
// The most entries a List reply carries; a larger prefix is an error, not a huge frame.
constexpr size_t kMaxListed = 4096;

enum class Type : uint16_t {
  Hello = 1,
  Challenge = 2,
  Auth = 3,
  Welcome = 4,
  Failure = 5,
  Grant = 16,      // ttl                                   -> Lease
  KeepAlive = 17,  // lease                                 -> Ttl
  Revoke = 18,     // lease                                 -> Revision
  Put = 19,        // key, value, lease                     -> Revision
  Get = 20,        // key                                   -> Entry
  Cas = 21,        // key, expected mod_revision, value, lease -> Swapped
  List = 22,       // prefix                                -> Entries
  Watch = 23,      // prefix, since revision, wait ms       -> Entries (changed) or Unchanged
  Lease = 32,
  Ttl = 33,
  Revision = 34,
  Entry = 35,      // present u8, then KeyValue
  Swapped = 36,    // succeeded u8, revision, present u8, KeyValue
  Entries = 37,    // revision, count, KeyValue...
  Unchanged = 38,  // revision
};

bool is_known_type(uint16_t type);
const char *type_name(Type type);

using Nonce = std::array<uint8_t, 32>;
using Proof = std::array<uint8_t, 32>;

enum class Side { Client, Server };
Proof proof(Side side, const std::string &secret, const Nonce &client_nonce, const Nonce &server_nonce);

struct Frame {
  Type type;
  std::vector<uint8_t> payload;
};

// Header and payload as one buffer. Throws bootstrap::wire::ProtocolError if the payload is too large.
std::vector<uint8_t> encode_frame(Type type, const std::vector<uint8_t> &payload);

// Reassembles frames from a byte stream; throws ProtocolError as soon as a bad header is visible.
class FrameReader {
 public:
  void feed(const uint8_t *data, size_t size);
  std::optional<Frame> next();

 private:
  std::vector<uint8_t> buffer_;
};

// Payload helpers for the fields the store's wire lacks.
void put_i64(bootstrap::wire::PayloadWriter &out, int64_t value);
int64_t get_i64(bootstrap::wire::PayloadReader &in);
void put_entry(bootstrap::wire::PayloadWriter &out, const KeyValue &entry);
KeyValue get_entry(bootstrap::wire::PayloadReader &in);
void put_bytes(bootstrap::wire::PayloadWriter &out, const std::string &text);
std::string get_bytes(bootstrap::wire::PayloadReader &in, size_t max, const char *what);

}  // namespace xffl::federation::protocol

#endif
