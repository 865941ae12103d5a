#include "federation/federation_protocol.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "common/error.h"

namespace xffl::federation::protocol {

using bootstrap::wire::PayloadReader;
using bootstrap::wire::PayloadWriter;
using bootstrap::wire::ProtocolError;

bool is_known_type(uint16_t type) {
  return (type >= 1 && type <= 5) || (type >= 16 && type <= 23) || (type >= 32 && type <= 38);
}

const char *type_name(Type type) {
  switch (type) {
    case Type::Hello: return "Hello";
    case Type::Challenge: return "Challenge";
    case Type::Auth: return "Auth";
    case Type::Welcome: return "Welcome";
    case Type::Failure: return "Failure";
    case Type::Grant: return "Grant";
    case Type::KeepAlive: return "KeepAlive";
    case Type::Revoke: return "Revoke";
    case Type::Put: return "Put";
    case Type::Get: return "Get";
    case Type::Cas: return "Cas";
    case Type::List: return "List";
    case Type::Watch: return "Watch";
    case Type::Lease: return "Lease";
    case Type::Ttl: return "Ttl";
    case Type::Revision: return "Revision";
    case Type::Entry: return "Entry";
    case Type::Swapped: return "Swapped";
    case Type::Entries: return "Entries";
    case Type::Unchanged: return "Unchanged";
  }
  return "unknown";
}

Proof proof(Side side, const std::string &secret, const Nonce &client_nonce, const Nonce &server_nonce) {
  // Labels distinct from the rendezvous store's ("xffl-store/1 ..."): a proof for one can never pass
  // as a proof for the other, nor one side's for the other side's.
  PayloadWriter message;
  message.text(side == Side::Client ? "xffl-federation/1 client" : "xffl-federation/1 server");
  message.fixed(client_nonce.data(), client_nonce.size());
  message.fixed(server_nonce.data(), server_nonce.size());
  std::vector<uint8_t> bytes = message.take();
  Proof out{};
  unsigned int length = 0;
  if (!HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()), bytes.data(), bytes.size(), out.data(),
            &length) ||
      length != out.size())
    fail(XFFL_EINTERNAL, "OpenSSL could not compute HMAC-SHA256 for the federation server's authentication");
  return out;
}

namespace {

void store_u32(std::vector<uint8_t> &out, uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<uint8_t>(value >> shift));
}

uint32_t load_u32(const uint8_t *data) {
  return (uint32_t{data[0]} << 24) | (uint32_t{data[1]} << 16) | (uint32_t{data[2]} << 8) | uint32_t{data[3]};
}

}  // namespace

std::vector<uint8_t> encode_frame(Type type, const std::vector<uint8_t> &payload) {
  if (payload.size() > kMaxPayload)
    throw ProtocolError("federation frame payload of " + std::to_string(payload.size()) + " bytes exceeds " +
                        std::to_string(kMaxPayload));
  std::vector<uint8_t> out;
  out.reserve(kHeaderSize + payload.size());
  store_u32(out, kMagic);
  out.push_back(static_cast<uint8_t>(kVersion >> 8));
  out.push_back(static_cast<uint8_t>(kVersion));
  auto raw = static_cast<uint16_t>(type);
  out.push_back(static_cast<uint8_t>(raw >> 8));
  out.push_back(static_cast<uint8_t>(raw));
  store_u32(out, static_cast<uint32_t>(payload.size()));
  out.insert(out.end(), payload.begin(), payload.end());
  return out;
}

void FrameReader::feed(const uint8_t *data, size_t size) {
  buffer_.insert(buffer_.end(), data, data + size);
  if (buffer_.size() < kHeaderSize) return;
  if (load_u32(buffer_.data()) != kMagic) throw ProtocolError("not a federation frame (bad magic)");
  uint16_t version = static_cast<uint16_t>((buffer_[4] << 8) | buffer_[5]);
  if (version != kVersion)
    throw ProtocolError("federation protocol version " + std::to_string(version) + ", expected " +
                        std::to_string(kVersion));
  uint16_t type = static_cast<uint16_t>((buffer_[6] << 8) | buffer_[7]);
  if (!is_known_type(type)) throw ProtocolError("unknown federation frame type " + std::to_string(type));
  uint32_t length = load_u32(buffer_.data() + 8);
  if (length > kMaxPayload)
    throw ProtocolError("federation frame of " + std::to_string(length) + " bytes exceeds " +
                        std::to_string(kMaxPayload));
}

std::optional<Frame> FrameReader::next() {
  if (buffer_.size() < kHeaderSize) return std::nullopt;
  uint32_t length = load_u32(buffer_.data() + 8);
  if (buffer_.size() < kHeaderSize + length) return std::nullopt;
  Frame frame{static_cast<Type>((buffer_[6] << 8) | buffer_[7]),
              std::vector<uint8_t>(buffer_.begin() + kHeaderSize, buffer_.begin() + kHeaderSize + length)};
  buffer_.erase(buffer_.begin(), buffer_.begin() + kHeaderSize + length);
  // The next frame's header, if it is already here, is checked now rather than at the next feed.
  if (!buffer_.empty()) feed(nullptr, 0);
  return frame;
}

void put_i64(PayloadWriter &out, int64_t value) {
  auto raw = static_cast<uint64_t>(value);
  out.u32(static_cast<uint32_t>(raw >> 32));
  out.u32(static_cast<uint32_t>(raw));
}

int64_t get_i64(PayloadReader &in) {
  uint64_t high = in.u32();
  uint64_t low = in.u32();
  return static_cast<int64_t>((high << 32) | low);
}

void put_bytes(PayloadWriter &out, const std::string &text) { out.text(text); }

std::string get_bytes(PayloadReader &in, size_t max, const char *what) { return in.text(max, what); }

void put_entry(PayloadWriter &out, const KeyValue &entry) {
  out.text(entry.key);
  out.text(entry.value);
  put_i64(out, entry.create_revision);
  put_i64(out, entry.mod_revision);
  put_i64(out, entry.lease);
}

KeyValue get_entry(PayloadReader &in) {
  KeyValue entry;
  entry.key = in.text(kMaxKey, "key");
  entry.value = in.text(kMaxValue, "value");
  entry.create_revision = get_i64(in);
  entry.mod_revision = get_i64(in);
  entry.lease = get_i64(in);
  return entry;
}

}  // namespace xffl::federation::protocol
