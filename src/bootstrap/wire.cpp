#include "bootstrap/wire.h"

#include <cstring>

namespace xffl::bootstrap::wire {

namespace {

uint32_t load_u32(const uint8_t *p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}
uint16_t load_u16(const uint8_t *p) { return static_cast<uint16_t>((p[0] << 8) | p[1]); }

void store_u32(std::vector<uint8_t> &out, uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<uint8_t>(value >> shift));
}
void store_u16(std::vector<uint8_t> &out, uint16_t value) {
  out.push_back(static_cast<uint8_t>(value >> 8));
  out.push_back(static_cast<uint8_t>(value));
}

}  // namespace

bool is_known_type(uint16_t type) {
  switch (static_cast<Type>(type)) {
    case Type::Hello: case Type::Challenge: case Type::Auth: case Type::Welcome: case Type::Reject:
    case Type::Publish: case Type::Fetch: case Type::Barrier: case Type::Ok: case Type::Value:
    case Type::Failure: case Type::Departed: case Type::Ranks: case Type::Claim: case Type::Release:
    case Type::Identity:
      return true;
  }
  return false;
}

const char *type_name(Type type) {
  switch (type) {
    case Type::Hello: return "hello";
    case Type::Challenge: return "challenge";
    case Type::Auth: return "auth";
    case Type::Welcome: return "welcome";
    case Type::Reject: return "reject";
    case Type::Publish: return "publish";
    case Type::Fetch: return "fetch";
    case Type::Barrier: return "barrier";
    case Type::Ok: return "ok";
    case Type::Value: return "value";
    case Type::Failure: return "failure";
    case Type::Departed: return "departed";
    case Type::Ranks: return "ranks";
    case Type::Claim: return "claim";
    case Type::Release: return "release";
    case Type::Identity: return "identity";
  }
  return "unknown";
}

std::vector<uint8_t> encode_frame(Type type, const std::vector<uint8_t> &payload) {
  if (payload.size() > kMaxPayload)
    throw ProtocolError("a " + std::string(type_name(type)) + " frame of " + std::to_string(payload.size()) +
                        " bytes exceeds the limit of " + std::to_string(kMaxPayload));
  std::vector<uint8_t> out;
  out.reserve(kHeaderSize + payload.size());
  store_u32(out, kMagic);
  store_u16(out, kVersion);
  store_u16(out, static_cast<uint16_t>(type));
  store_u32(out, static_cast<uint32_t>(payload.size()));
  out.insert(out.end(), payload.begin(), payload.end());
  return out;
}

void FrameReader::feed(const uint8_t *data, size_t size) {
  if (start_ > 0 && start_ == buffer_.size()) {
    buffer_.clear();
    start_ = 0;
  }
  buffer_.insert(buffer_.end(), data, data + size);
  check_header();
}

void FrameReader::check_header() const {
  if (buffered() < kHeaderSize) {
    // Reject a wrong magic byte early: garbage should not wait for 12 bytes to be dropped.
    for (size_t i = 0; i < buffered() && i < 4; ++i)
      if (buffer_[start_ + i] != static_cast<uint8_t>(kMagic >> (24 - 8 * i)))
        throw ProtocolError("not an xffl store frame (bad magic)");
    return;
  }
  const uint8_t *header = buffer_.data() + start_;
  if (load_u32(header) != kMagic) throw ProtocolError("not an xffl store frame (bad magic)");
  uint16_t version = load_u16(header + 4);
  if (version != kVersion)
    throw ProtocolError("store protocol version " + std::to_string(version) + " differs from this library's " +
                        std::to_string(kVersion));
  uint16_t type = load_u16(header + 6);
  if (!is_known_type(type)) throw ProtocolError("unknown frame type " + std::to_string(type));
  uint32_t length = load_u32(header + 8);
  if (length > kMaxPayload)
    throw ProtocolError("frame of " + std::to_string(length) + " bytes exceeds the limit of " +
                        std::to_string(kMaxPayload));
}

std::optional<Frame> FrameReader::next() {
  if (buffered() < kHeaderSize) return std::nullopt;
  check_header();
  const uint8_t *header = buffer_.data() + start_;
  size_t length = load_u32(header + 8);
  if (buffered() < kHeaderSize + length) return std::nullopt;
  Frame frame{static_cast<Type>(load_u16(header + 6)),
              std::vector<uint8_t>(header + kHeaderSize, header + kHeaderSize + length)};
  start_ += kHeaderSize + length;
  if (start_ == buffer_.size()) {
    buffer_.clear();
    start_ = 0;
  } else if (start_ > kMaxPayload) {
    buffer_.erase(buffer_.begin(), buffer_.begin() + static_cast<std::ptrdiff_t>(start_));
    start_ = 0;
  }
  if (buffered() > 0) check_header();
  return frame;
}

void PayloadWriter::u8(uint8_t value) { bytes_.push_back(value); }
void PayloadWriter::u32(uint32_t value) { store_u32(bytes_, value); }
void PayloadWriter::fixed(const uint8_t *data, size_t size) { bytes_.insert(bytes_.end(), data, data + size); }
void PayloadWriter::text(const std::string &value) {
  u32(static_cast<uint32_t>(value.size()));
  bytes_.insert(bytes_.end(), value.begin(), value.end());
}
void PayloadWriter::blob(const std::vector<uint8_t> &value) {
  u32(static_cast<uint32_t>(value.size()));
  bytes_.insert(bytes_.end(), value.begin(), value.end());
}

void PayloadReader::need(size_t size, const char *what) const {
  if (data_.size() - offset_ < size)
    throw ProtocolError(std::string("truncated payload: ") + what + " needs " + std::to_string(size) +
                        " bytes, " + std::to_string(data_.size() - offset_) + " left");
}

uint8_t PayloadReader::u8() {
  need(1, "u8");
  return data_[offset_++];
}

uint32_t PayloadReader::u32() {
  need(4, "u32");
  uint32_t value = load_u32(data_.data() + offset_);
  offset_ += 4;
  return value;
}

void PayloadReader::fixed(uint8_t *out, size_t size) {
  need(size, "fixed field");
  std::memcpy(out, data_.data() + offset_, size);
  offset_ += size;
}

std::string PayloadReader::text(size_t max, const char *what) {
  size_t size = u32();
  if (size > max)
    throw ProtocolError(std::string(what) + " of " + std::to_string(size) + " bytes exceeds the limit of " +
                        std::to_string(max));
  need(size, what);
  std::string value(reinterpret_cast<const char *>(data_.data() + offset_), size);
  offset_ += size;
  return value;
}

std::vector<uint8_t> PayloadReader::blob(size_t max, const char *what) {
  size_t size = u32();
  if (size > max)
    throw ProtocolError(std::string(what) + " of " + std::to_string(size) + " bytes exceeds the limit of " +
                        std::to_string(max));
  need(size, what);
  std::vector<uint8_t> value(data_.begin() + static_cast<std::ptrdiff_t>(offset_),
                             data_.begin() + static_cast<std::ptrdiff_t>(offset_ + size));
  offset_ += size;
  return value;
}

void PayloadReader::finish() const {
  if (offset_ != data_.size())
    throw ProtocolError(std::to_string(data_.size() - offset_) + " unexpected bytes after the message");
}

}  // namespace xffl::bootstrap::wire
