#include "bootstrap/protocol.h"

#include <algorithm>

namespace xffl::bootstrap::protocol {

using wire::PayloadReader;
using wire::PayloadWriter;
using wire::ProtocolError;
using wire::Type;

namespace {

void check_size(size_t size, size_t max, const char *what) {
  if (size > max)
    throw ProtocolError(std::string(what) + " of " + std::to_string(size) + " bytes exceeds the limit of " +
                        std::to_string(max));
}

// Statuses travel as their (negative) int value; anything that is not an error becomes EINTERNAL so
// a confused or hostile peer cannot make a failure look like success.
xffl_status_t read_status(PayloadReader &reader) {
  int32_t value = reader.i32();
  if (value >= 0 || value < XFFL_EQUORUM) return XFFL_EINTERNAL;
  return static_cast<xffl_status_t>(value);
}

}  // namespace

std::vector<uint8_t> encode(const Hello &message) {
  check_size(message.job_id.size(), wire::kMaxJobId, "job id");
  PayloadWriter out;
  out.u32(message.world_size);
  out.u32(message.rank);
  out.text(message.job_id);
  out.fixed(message.client_nonce.data(), message.client_nonce.size());
  return wire::encode_frame(Type::Hello, out.take());
}

std::vector<uint8_t> encode(const Challenge &message) {
  PayloadWriter out;
  out.fixed(message.server_nonce.data(), message.server_nonce.size());
  return wire::encode_frame(Type::Challenge, out.take());
}

std::vector<uint8_t> encode(const Auth &message) {
  PayloadWriter out;
  out.fixed(message.client_proof.data(), message.client_proof.size());
  return wire::encode_frame(Type::Auth, out.take());
}

std::vector<uint8_t> encode(const Welcome &message) {
  PayloadWriter out;
  out.u8(message.authenticated ? 1 : 0);
  out.fixed(message.server_proof.data(), message.server_proof.size());
  return wire::encode_frame(Type::Welcome, out.take());
}

std::vector<uint8_t> encode(const Reject &message) {
  PayloadWriter out;
  out.i32(message.status);
  out.text(message.message.substr(0, wire::kMaxText));
  return wire::encode_frame(Type::Reject, out.take());
}

std::vector<uint8_t> encode(const Publish &message) {
  check_size(message.key.size(), wire::kMaxKey, "key");
  check_size(message.value.size(), wire::kMaxValue, "value");
  PayloadWriter out;
  out.text(message.key);
  out.blob(message.value);
  return wire::encode_frame(Type::Publish, out.take());
}

std::vector<uint8_t> encode(const Fetch &message) {
  check_size(message.key.size(), wire::kMaxKey, "key");
  PayloadWriter out;
  out.text(message.key);
  out.u32(message.timeout_ms);
  return wire::encode_frame(Type::Fetch, out.take());
}

std::vector<uint8_t> encode(const Barrier &message) {
  check_size(message.name.size(), wire::kMaxKey, "barrier name");
  PayloadWriter out;
  out.text(message.name);
  out.u32(message.timeout_ms);
  return wire::encode_frame(Type::Barrier, out.take());
}

std::vector<uint8_t> encode_ok() { return wire::encode_frame(Type::Ok, {}); }

std::vector<uint8_t> encode(const Value &message) {
  check_size(message.value.size(), wire::kMaxValue, "value");
  PayloadWriter out;
  out.blob(message.value);
  return wire::encode_frame(Type::Value, out.take());
}

std::vector<uint8_t> encode(const Failure &message) {
  PayloadWriter out;
  out.i32(message.status);
  out.text(message.message.substr(0, wire::kMaxText));
  size_t count = std::min(message.ranks.size(), wire::kMaxRanksInFailure);
  out.u32(static_cast<uint32_t>(count));
  for (size_t i = 0; i < count; ++i) out.u32(message.ranks[i]);
  return wire::encode_frame(Type::Failure, out.take());
}

std::vector<uint8_t> encode_departed() { return wire::encode_frame(Type::Departed, {}); }

std::vector<uint8_t> encode(const Ranks &message) {
  if (message.ranks.size() > wire::kMaxRanksInList)
    throw ProtocolError("a list of " + std::to_string(message.ranks.size()) + " ranks exceeds the limit of " +
                        std::to_string(wire::kMaxRanksInList));
  PayloadWriter out;
  out.u32(static_cast<uint32_t>(message.ranks.size()));
  for (uint32_t rank : message.ranks) out.u32(rank);
  return wire::encode_frame(Type::Ranks, out.take());
}

std::vector<uint8_t> encode(const Claim &message) {
  check_size(message.key.size(), wire::kMaxValue, "group key");
  PayloadWriter out;
  out.blob(message.key);
  out.u32(message.members);
  return wire::encode_frame(Type::Claim, out.take());
}

std::vector<uint8_t> encode(const Identity &message) {
  PayloadWriter out;
  out.u32(message.slot);
  out.u32(static_cast<uint32_t>(message.serial >> 32));
  out.u32(static_cast<uint32_t>(message.serial));
  return wire::encode_frame(Type::Identity, out.take());
}

std::vector<uint8_t> encode(const Release &message) {
  PayloadWriter out;
  out.u32(message.slot);
  return wire::encode_frame(Type::Release, out.take());
}

Hello decode_hello(const std::vector<uint8_t> &payload) {
  PayloadReader in(payload);
  Hello message;
  message.world_size = in.u32();
  message.rank = in.u32();
  message.job_id = in.text(wire::kMaxJobId, "job id");
  in.fixed(message.client_nonce.data(), message.client_nonce.size());
  in.finish();
  return message;
}

Challenge decode_challenge(const std::vector<uint8_t> &payload) {
  PayloadReader in(payload);
  Challenge message;
  in.fixed(message.server_nonce.data(), message.server_nonce.size());
  in.finish();
  return message;
}

Auth decode_auth(const std::vector<uint8_t> &payload) {
  PayloadReader in(payload);
  Auth message;
  in.fixed(message.client_proof.data(), message.client_proof.size());
  in.finish();
  return message;
}

Welcome decode_welcome(const std::vector<uint8_t> &payload) {
  PayloadReader in(payload);
  Welcome message;
  uint8_t flag = in.u8();
  if (flag > 1) throw ProtocolError("welcome flag " + std::to_string(flag) + " is not 0 or 1");
  message.authenticated = flag == 1;
  in.fixed(message.server_proof.data(), message.server_proof.size());
  in.finish();
  return message;
}

Reject decode_reject(const std::vector<uint8_t> &payload) {
  PayloadReader in(payload);
  Reject message;
  message.status = read_status(in);
  message.message = in.text(wire::kMaxText, "reject message");
  in.finish();
  return message;
}

Publish decode_publish(const std::vector<uint8_t> &payload) {
  PayloadReader in(payload);
  Publish message;
  message.key = in.text(wire::kMaxKey, "key");
  message.value = in.blob(wire::kMaxValue, "value");
  in.finish();
  return message;
}

Fetch decode_fetch(const std::vector<uint8_t> &payload) {
  PayloadReader in(payload);
  Fetch message;
  message.key = in.text(wire::kMaxKey, "key");
  message.timeout_ms = in.u32();
  in.finish();
  return message;
}

Barrier decode_barrier(const std::vector<uint8_t> &payload) {
  PayloadReader in(payload);
  Barrier message;
  message.name = in.text(wire::kMaxKey, "barrier name");
  message.timeout_ms = in.u32();
  in.finish();
  return message;
}

void decode_ok(const std::vector<uint8_t> &payload) { PayloadReader(payload).finish(); }

Value decode_value(const std::vector<uint8_t> &payload) {
  PayloadReader in(payload);
  Value message;
  message.value = in.blob(wire::kMaxValue, "value");
  in.finish();
  return message;
}

Failure decode_failure(const std::vector<uint8_t> &payload) {
  PayloadReader in(payload);
  Failure message;
  message.status = read_status(in);
  message.message = in.text(wire::kMaxText, "failure message");
  uint32_t count = in.u32();
  if (count > wire::kMaxRanksInFailure)
    throw ProtocolError("failure lists " + std::to_string(count) + " ranks, more than the limit of " +
                        std::to_string(wire::kMaxRanksInFailure));
  message.ranks.reserve(count);
  for (uint32_t i = 0; i < count; ++i) message.ranks.push_back(in.u32());
  in.finish();
  return message;
}

void decode_departed(const std::vector<uint8_t> &payload) { PayloadReader(payload).finish(); }

Ranks decode_ranks(const std::vector<uint8_t> &payload, size_t max_ranks) {
  max_ranks = std::min(max_ranks, wire::kMaxRanksInList);
  PayloadReader in(payload);
  Ranks message;
  uint32_t count = in.u32();
  if (count > max_ranks)
    throw ProtocolError("a list of " + std::to_string(count) + " ranks exceeds the limit of " +
                        std::to_string(max_ranks));
  message.ranks.reserve(std::min<size_t>(count, payload.size() / 4));  // a lying count cannot reserve much
  for (uint32_t i = 0; i < count; ++i) {
    uint32_t rank = in.u32();
    if (rank >= max_ranks) throw ProtocolError("rank " + std::to_string(rank) + " is outside [0, " + std::to_string(max_ranks) + ")");
    if (!message.ranks.empty() && rank <= message.ranks.back())
      throw ProtocolError("ranks are not strictly ascending (" + std::to_string(rank) + " after " +
                          std::to_string(message.ranks.back()) + ")");
    message.ranks.push_back(rank);
  }
  in.finish();
  return message;
}

Claim decode_claim(const std::vector<uint8_t> &payload) {
  PayloadReader in(payload);
  Claim message;
  message.key = in.blob(wire::kMaxValue, "group key");
  if (message.key.empty()) throw ProtocolError("a claim's group key is empty");
  message.members = in.u32();
  if (message.members == 0) throw ProtocolError("a claim names a group of 0 members");
  in.finish();
  return message;
}

Identity decode_identity(const std::vector<uint8_t> &payload) {
  PayloadReader in(payload);
  Identity message;
  message.slot = in.u32();
  const uint64_t high = in.u32();
  message.serial = high << 32 | in.u32();
  in.finish();
  return message;
}

Release decode_release(const std::vector<uint8_t> &payload) {
  PayloadReader in(payload);
  Release message;
  message.slot = in.u32();
  in.finish();
  return message;
}

}  // namespace xffl::bootstrap::protocol
