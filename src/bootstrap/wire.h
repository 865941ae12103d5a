// The store's framing: every message is one frame, a 12-byte header then a bounded payload.
//
//   offset 0  u32 magic 'XFST'   offset 4  u16 version   offset 6  u16 type   offset 8  u32 length
//
// All integers are big-endian. A frame whose header is wrong (magic, version, unknown type) or whose
// length exceeds kMaxPayload is rejected as soon as its header has arrived, so a stranger cannot make
// the server buffer more than one bounded frame. Payloads are read with PayloadReader, which checks
// every length against the remaining bytes and the per-field limits (keys 1 KiB, values 1 MiB).
#ifndef XFFL_SRC_BOOTSTRAP_WIRE_H
#define XFFL_SRC_BOOTSTRAP_WIRE_H

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace xffl::bootstrap::wire {

constexpr uint32_t kMagic = 0x58465354;  // "XFST"
constexpr uint16_t kVersion = 1;
constexpr size_t kHeaderSize = 12;
constexpr size_t kMaxKey = 1024;
constexpr size_t kMaxValue = size_t{1} << 20;
constexpr size_t kMaxJobId = 256;
constexpr size_t kMaxText = 4096;  // error messages carried in Reject / Failure frames
constexpr size_t kMaxRanksInFailure = 4096;
// The most ranks one Ranks frame lists: as many u32 as fit in a payload next to their count.
constexpr size_t kMaxRanksInList = (size_t{1} << 20) / 4;
// The largest payload of any message: a Publish of the largest key and value, plus field lengths.
constexpr size_t kMaxPayload = kMaxValue + kMaxKey + 64;
constexpr size_t kNonceSize = 32;
constexpr size_t kProofSize = 32;

enum class Type : uint16_t {
  Hello = 1,      // client -> server: world size, rank, job id, client nonce
  Challenge = 2,  // server -> client: server nonce (only when the store has a token)
  Auth = 3,       // client -> server: the client's proof
  Welcome = 4,    // server -> client: joined; carries the server's proof when authenticated
  Reject = 5,     // server -> client: status and message; the server closes the connection after it
  Publish = 16,   // client -> server: key, value
  Fetch = 17,     // client -> server: key, timeout in ms (the server waits, the client does not poll)
  Barrier = 18,   // client -> server: name, timeout in ms
  Departed = 19,  // client -> server: which ranks have left the job? (no payload; answered at once)
  Claim = 20,     // client -> server: a process group's canonical key and member count
  Release = 21,   // client -> server: this rank is done with a group's slot (never answered)
  Ok = 32,        // server -> client: a Publish or Barrier succeeded
  Value = 33,     // server -> client: the value of a Fetch
  Failure = 34,   // server -> client: a request failed (status, message, ranks involved)
  Ranks = 35,     // server -> client: the answer to Departed, ranks ascending
  Identity = 36,  // server -> client: the answer to Claim, the group's slot and serial
};

// Observes every byte a store endpoint sends (sent = true) or receives, for tests that check what
// travels on the wire (e.g. that the auth token never does).
using Tap = std::function<void(bool sent, const uint8_t *data, size_t size)>;

bool is_known_type(uint16_t type);
const char *type_name(Type type);

// A malformed frame or payload. The server drops the connection; the client reports XFFL_ENETWORK.
class ProtocolError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Frame {
  Type type;
  std::vector<uint8_t> payload;
};

// Header and payload as one buffer, ready to send. Throws ProtocolError if the payload is too large.
std::vector<uint8_t> encode_frame(Type type, const std::vector<uint8_t> &payload);

// Reassembles frames from a byte stream delivered in arbitrary pieces.
class FrameReader {
 public:
  // Appends bytes; throws ProtocolError as soon as a bad header is visible.
  void feed(const uint8_t *data, size_t size);
  // The next complete frame, if one has arrived.
  std::optional<Frame> next();
  size_t buffered() const { return buffer_.size() - start_; }

 private:
  void check_header() const;
  std::vector<uint8_t> buffer_;
  size_t start_ = 0;  // consumed prefix, dropped lazily so feeding many small frames stays linear
};

class PayloadWriter {
 public:
  void u8(uint8_t value);
  void u32(uint32_t value);
  void i32(int32_t value) { u32(static_cast<uint32_t>(value)); }
  void fixed(const uint8_t *data, size_t size);
  void text(const std::string &value);                   // u32 length + bytes
  void blob(const std::vector<uint8_t> &value);          // u32 length + bytes
  std::vector<uint8_t> take() { return std::move(bytes_); }

 private:
  std::vector<uint8_t> bytes_;
};

class PayloadReader {
 public:
  explicit PayloadReader(const std::vector<uint8_t> &payload) : data_(payload) {}
  uint8_t u8();
  uint32_t u32();
  int32_t i32() { return static_cast<int32_t>(u32()); }
  void fixed(uint8_t *out, size_t size);
  std::string text(size_t max, const char *what);
  std::vector<uint8_t> blob(size_t max, const char *what);
  // Throws if bytes are left over: every message has an exact shape.
  void finish() const;

 private:
  void need(size_t size, const char *what) const;
  const std::vector<uint8_t> &data_;
  size_t offset_ = 0;
};

}  // namespace xffl::bootstrap::wire

#endif
