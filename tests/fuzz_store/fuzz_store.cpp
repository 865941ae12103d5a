// libFuzzer target for the store's wire protocol: arbitrary bytes become frames, split across several
// connections and interleaved with the passing of time, fed to the server's state machine (StoreCore)
// with no sockets. Oracles: no crash, no sanitizer report, and everything the server sends is a
// well-formed frame of a type a client expects (decoded with the client's own decoders).
//
// Input layout:
//   byte 0            flags: bit 0 = the store has a token; bit 1 / bit 2 = connection 1 / 2 starts with a
//                     valid hello (and authentication) as rank 0 / 1, so mutations reach joined states
//   then steps        [control][length][length bytes]
//                     control bit 7: advance time by length * 7 ms and expire deadlines (no bytes follow)
//                     control bit 6: the connection hangs up (and a fresh one takes its slot)
//                     otherwise: the bytes arrive on connection 1 + control % 3
#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "bootstrap/auth.h"
#include "bootstrap/protocol.h"
#include "bootstrap/store_core.h"

using namespace xffl;
using namespace xffl::bootstrap;
using Clock = StoreCore::Clock;

namespace {

constexpr char kToken[] = "fuzz-token";

protocol::Nonce nonce_of(uint8_t fill) {
  protocol::Nonce nonce;
  nonce.fill(fill);
  return nonce;
}

// Decodes what the server sent with the client's decoders; a malformed server frame is a bug.
void check_server_output(StoreCore &core, StoreCore::ConnectionId id, std::map<StoreCore::ConnectionId, wire::FrameReader> &readers) {
  size_t size = 0;
  while (const uint8_t *data = core.pending_output(id, &size)) {
    readers[id].feed(data, size);  // throws (and so aborts the run) on a bad header
    core.sent(id, size);
  }
  while (auto frame = readers[id].next()) {
    switch (frame->type) {
      case wire::Type::Challenge: protocol::decode_challenge(frame->payload); break;
      case wire::Type::Welcome: protocol::decode_welcome(frame->payload); break;
      case wire::Type::Reject: protocol::decode_reject(frame->payload); break;
      case wire::Type::Ok: protocol::decode_ok(frame->payload); break;
      case wire::Type::Value: protocol::decode_value(frame->payload); break;
      case wire::Type::Failure: protocol::decode_failure(frame->payload); break;
      case wire::Type::Ranks: protocol::decode_ranks(frame->payload, 2); break;  // the fuzzed world is 2
      case wire::Type::Identity: {
        // The fuzzed store has 4 slots: an identity outside them is a bug.
        if (protocol::decode_identity(frame->payload).slot >= 4) __builtin_trap();
        break;
      }
      default: __builtin_trap();  // the server sent a client-to-server frame
    }
  }
}

void join_as(StoreCore &core, StoreCore::ConnectionId id, uint32_t rank, bool token, Clock::time_point now,
             std::map<StoreCore::ConnectionId, wire::FrameReader> &readers) {
  protocol::Hello hello{2, rank, "fuzz", nonce_of(static_cast<uint8_t>(rank + 1))};
  std::vector<uint8_t> bytes = protocol::encode(hello);
  core.receive(id, bytes.data(), bytes.size(), now);
  if (token) {
    protocol::Auth answer{auth::proof(auth::Side::Client, kToken, 2, rank, "fuzz", hello.client_nonce, nonce_of(0x77))};
    bytes = protocol::encode(answer);
    core.receive(id, bytes.data(), bytes.size(), now);
  }
  check_server_output(core, id, readers);
}

// The raw input as a payload of every message type: the decoders must reject, never misbehave.
void decode_everything(const std::vector<uint8_t> &payload) {
  auto attempt = [&](auto decode) {
    try {
      decode(payload);
    } catch (const wire::ProtocolError &) {
    }
  };
  attempt(protocol::decode_hello);
  attempt(protocol::decode_challenge);
  attempt(protocol::decode_auth);
  attempt(protocol::decode_welcome);
  attempt(protocol::decode_reject);
  attempt(protocol::decode_publish);
  attempt(protocol::decode_fetch);
  attempt(protocol::decode_barrier);
  attempt(protocol::decode_ok);
  attempt(protocol::decode_value);
  attempt(protocol::decode_failure);
  attempt(protocol::decode_departed);
  attempt([](const std::vector<uint8_t> &bytes) { return protocol::decode_ranks(bytes); });
  attempt(protocol::decode_claim);
  attempt(protocol::decode_identity);
  attempt(protocol::decode_release);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  decode_everything(std::vector<uint8_t>(data, data + size));

  const uint8_t flags = data[0];
  ServerConfig config;
  config.world_size = 2;
  config.job_id = "fuzz";
  config.auth_token = (flags & 1) ? kToken : "";
  config.address = "fuzz:0";
  config.hello_timeout_ms = 500;
  config.max_stored_bytes = 4 << 20;
  config.group_slots = 4;  // few: exhaustion and reuse are reachable
  config.logger = Logger(XFFL_LOG_ERROR, 0, [](const std::string &) {});
  config.nonce_source = [] { return nonce_of(0x77); };
  StoreCore core(config);

  Clock::time_point now{};  // a fixed origin: runs are reproducible
  std::map<StoreCore::ConnectionId, wire::FrameReader> readers;
  StoreCore::ConnectionId slots[3] = {1, 2, 3};
  StoreCore::ConnectionId next_id = 4;
  for (StoreCore::ConnectionId id : slots) core.accept(id, "peer", now);
  if (flags & 2) join_as(core, slots[0], 0, flags & 1, now, readers);
  if (flags & 4) join_as(core, slots[1], 1, flags & 1, now, readers);

  size_t at = 1;
  while (at + 2 <= size) {
    const uint8_t control = data[at];
    const size_t length = data[at + 1];
    at += 2;
    const size_t slot = control % 3;
    StoreCore::ConnectionId &id = slots[slot];
    if (control & 0x80) {
      now += std::chrono::milliseconds(length * 7);
      core.expire(now);
    } else if (control & 0x40) {
      core.disconnected(id, now);
      readers.erase(id);
      id = next_id++;
      core.accept(id, "peer", now);
    } else {
      const size_t take = length < size - at ? length : size - at;
      core.receive(id, data + at, take, now);
      at += take;
    }
    for (StoreCore::ConnectionId &each : slots) {
      check_server_output(core, each, readers);
      if (core.disposition(each) != StoreCore::Disposition::Keep) {
        core.disconnected(each, now);
        readers.erase(each);
        each = next_id++;
        core.accept(each, "peer", now);
      }
    }
  }
  return 0;
}
