// The built-in server's requests, without sockets: one request frame in, one reply frame out, from the
// FederationCore. The server (federation_server.h) adds the sockets and the waiting of a Watch; the
// fuzzer (tests/fuzz_federation) drives these functions with arbitrary bytes.
#ifndef XFFL_SRC_FEDERATION_FEDERATION_REQUESTS_H
#define XFFL_SRC_FEDERATION_FEDERATION_REQUESTS_H

#include <optional>
#include <string>
#include <vector>

#include "federation/federation_core.h"
#include "federation/federation_protocol.h"

namespace xffl::federation {

struct Reply {
  protocol::Type type = protocol::Type::Failure;
  std::vector<uint8_t> payload;
};

// What a Watch waits for: a change under prefix after revision `since`, for at most wait_ms.
struct WatchRequest {
  std::string prefix;
  int64_t since = 0;
  uint32_t wait_ms = 0;
};

// Decodes a request and answers it. A Watch is not answered here: the result is nullopt and *watch
// says what it waits for (the caller waits, then calls answer_watch). The core's refusals
// (xffl::Error) become a Failure reply; a malformed or unexpected frame throws
// bootstrap::wire::ProtocolError (the server drops the connection).
std::optional<Reply> answer(FederationCore &core, const protocol::Frame &request, FederationCore::Clock::time_point now,
                            WatchRequest *watch);

// The answer to a Watch now: Entries (the prefix's listing) if it changed, else Unchanged.
Reply answer_watch(FederationCore &core, const WatchRequest &watch, FederationCore::Clock::time_point now);

}  // namespace xffl::federation

#endif
