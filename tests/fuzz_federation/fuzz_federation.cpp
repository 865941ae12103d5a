// libFuzzer target for what the federation reads from the network: the built-in server's frames and
// requests (FrameReader, then answer / answer_watch on a FederationCore, with time passing), and the
// JSON and base64 of etcd's answers. Oracles: no crash, no sanitizer report, every reply is a frame a
// client expects, within the frame limit.
//
// Input layout: byte 0 chooses. Even: the rest is etcd JSON (parsed, and every string base64-decoded).
// Odd: steps [control][length][length bytes]; control bit 7 advances time by length seconds (leases
// end), otherwise the bytes arrive on the connection; each complete frame is answered.
#include <cstddef>
#include <cstdint>
#include <string>

#include "federation/federation_core.h"
#include "federation/federation_requests.h"
#include "federation/json.h"

using namespace xffl::federation;

namespace {

void walk(const json::Value &value) {
  if (value.kind == json::Value::Kind::String) {
    try {
      json::unbase64(value.text);
    } catch (const std::exception &) {
    }
  }
  value.as_int64();
  for (const json::Value &item : value.items) walk(item);
  for (const auto &[name, member] : value.members) walk(member);
}

void check(const Reply &reply) {
  using protocol::Type;
  if (reply.payload.size() > protocol::kMaxPayload) __builtin_trap();
  switch (reply.type) {
    case Type::Failure: case Type::Lease: case Type::Ttl: case Type::Revision: case Type::Entry:
    case Type::Swapped: case Type::Entries: case Type::Unchanged:
      break;
    default: __builtin_trap();  // a client-to-server frame, or a handshake frame
  }
  protocol::encode_frame(reply.type, reply.payload);  // a reply the server could send
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  if (data[0] % 2 == 0) {
    try {
      walk(json::parse(std::string(reinterpret_cast<const char *>(data + 1), size - 1)));
    } catch (const std::runtime_error &) {
    }
    return 0;
  }
  FederationCore core;
  auto now = FederationCore::Clock::time_point{} + std::chrono::hours(1);
  protocol::FrameReader reader;
  size_t at = 1;
  while (at + 2 <= size) {
    uint8_t control = data[at], length = data[at + 1];
    at += 2;
    if (control & 0x80) {
      now += std::chrono::seconds(length);
      continue;
    }
    size_t take = std::min<size_t>(length, size - at);
    try {
      reader.feed(data + at, take);
      while (auto frame = reader.next()) {
        WatchRequest watch;
        std::optional<Reply> reply = answer(core, *frame, now, &watch);
        check(reply ? *reply : answer_watch(core, watch, now));
      }
    } catch (const xffl::bootstrap::wire::ProtocolError &) {
      reader = protocol::FrameReader{};  // the server drops the connection; a new one starts
    }
    at += take;
  }
  return 0;
}
