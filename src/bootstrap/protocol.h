// The store's messages: one struct per frame type, with an encoder to a complete frame and a decoder
// from a frame's payload. Client and server share these, so both sides check the same bounds.
//
// Conversation (DESIGN.md section 4):
//   client  Hello{world, rank, job, client nonce}
//   server  Reject{status, message}                        world size / job id / rank wrong: then closes
//           Challenge{server nonce}                        the store has a token
//           Welcome{}                                      no token: joined
//   client  Auth{client proof}                             after a Challenge
//   server  Welcome{server proof} or Reject{XFFL_EAUTH}    the client checks the server's proof too
//   then any number of Publish / Fetch / Barrier, each answered by Ok, Value or Failure, Departed,
//   answered by Ranks (the joined ranks whose connection has closed), and Claim, answered by Identity
//   or Failure (group_registry.h), one at a time; and Release, which is never answered.
#ifndef XFFL_SRC_BOOTSTRAP_PROTOCOL_H
#define XFFL_SRC_BOOTSTRAP_PROTOCOL_H

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "bootstrap/wire.h"
#include "xffl/types.h"

namespace xffl::bootstrap::protocol {

using Nonce = std::array<uint8_t, wire::kNonceSize>;
using Proof = std::array<uint8_t, wire::kProofSize>;

struct Hello {
  uint32_t world_size = 0;
  uint32_t rank = 0;
  std::string job_id;
  Nonce client_nonce{};
};

struct Challenge {
  Nonce server_nonce{};
};

struct Auth {
  Proof client_proof{};
};

struct Welcome {
  bool authenticated = false;
  Proof server_proof{};  // all zero without authentication
};

struct Reject {
  xffl_status_t status = XFFL_EINVAL;
  std::string message;
};

struct Publish {
  std::string key;
  std::vector<uint8_t> value;
};

struct Fetch {
  std::string key;
  uint32_t timeout_ms = 0;
};

struct Barrier {
  std::string name;
  uint32_t timeout_ms = 0;
};

struct Value {
  std::vector<uint8_t> value;
};

// The answer to a Departed request: ranks that joined and whose connection has closed, ascending.
struct Ranks {
  std::vector<uint32_t> ranks;
};

// A process group's identity: the canonical key (GroupRegistry::key) and its member count.
struct Claim {
  std::vector<uint8_t> key;
  uint32_t members = 0;
};

struct Identity {
  uint32_t slot = 0;
  uint64_t serial = 0;
};

struct Release {
  uint32_t slot = 0;
};

struct Failure {
  xffl_status_t status = XFFL_EINTERNAL;
  std::string message;
  std::vector<uint32_t> ranks;  // ranks the failure is about (a barrier's missing ranks, a departed rank)
};

// Complete frames, header included. Throw wire::ProtocolError when a field is beyond its limit.
std::vector<uint8_t> encode(const Hello &message);
std::vector<uint8_t> encode(const Challenge &message);
std::vector<uint8_t> encode(const Auth &message);
std::vector<uint8_t> encode(const Welcome &message);
std::vector<uint8_t> encode(const Reject &message);
std::vector<uint8_t> encode(const Publish &message);
std::vector<uint8_t> encode(const Fetch &message);
std::vector<uint8_t> encode(const Barrier &message);
std::vector<uint8_t> encode_ok();
std::vector<uint8_t> encode(const Value &message);
std::vector<uint8_t> encode(const Failure &message);
std::vector<uint8_t> encode_departed();  // the request has no payload
std::vector<uint8_t> encode(const Ranks &message);
std::vector<uint8_t> encode(const Claim &message);
std::vector<uint8_t> encode(const Identity &message);
std::vector<uint8_t> encode(const Release &message);

// Payload decoders; throw wire::ProtocolError on any malformed or out-of-bounds field.
Hello decode_hello(const std::vector<uint8_t> &payload);
Challenge decode_challenge(const std::vector<uint8_t> &payload);
Auth decode_auth(const std::vector<uint8_t> &payload);
Welcome decode_welcome(const std::vector<uint8_t> &payload);
Reject decode_reject(const std::vector<uint8_t> &payload);
Publish decode_publish(const std::vector<uint8_t> &payload);
Fetch decode_fetch(const std::vector<uint8_t> &payload);
Barrier decode_barrier(const std::vector<uint8_t> &payload);
void decode_ok(const std::vector<uint8_t> &payload);
Value decode_value(const std::vector<uint8_t> &payload);
Failure decode_failure(const std::vector<uint8_t> &payload);
void decode_departed(const std::vector<uint8_t> &payload);
// At most max_ranks ranks (a client passes its world size), each below max_ranks, strictly ascending.
Ranks decode_ranks(const std::vector<uint8_t> &payload, size_t max_ranks = wire::kMaxRanksInList);
Claim decode_claim(const std::vector<uint8_t> &payload);
Identity decode_identity(const std::vector<uint8_t> &payload);
Release decode_release(const std::vector<uint8_t> &payload);

}  // namespace xffl::bootstrap::protocol

#endif
