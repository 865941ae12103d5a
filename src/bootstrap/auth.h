// Shared-secret authentication of the store (XFFL_AUTH_TOKEN): HMAC-SHA256 challenge-response.
//
// Both sides contribute a fresh 32-byte nonce. The client proves it knows the token with
//   HMAC(token, "xffl-store/1 client" | world | rank | job id | client nonce | server nonce)
// and the server answers with the same HMAC under the label "xffl-store/1 server", so the client also
// knows it reached the real store (mutual). The labels keep one side's proof from being replayed as
// the other's; the nonces keep old proofs from being replayed at all. The token itself never leaves
// the process. Proofs are compared in constant time.
#ifndef XFFL_SRC_BOOTSTRAP_AUTH_H
#define XFFL_SRC_BOOTSTRAP_AUTH_H

#include <string>

#include "bootstrap/protocol.h"

namespace xffl::bootstrap::auth {

enum class Side { Client, Server };

// Cryptographically random bytes from OpenSSL; throws xffl::Error(XFFL_EINTERNAL) if it has none.
protocol::Nonce random_nonce();

protocol::Proof proof(Side side, const std::string &token, uint32_t world_size, uint32_t rank,
                      const std::string &job_id, const protocol::Nonce &client_nonce,
                      const protocol::Nonce &server_nonce);

bool proofs_equal(const protocol::Proof &a, const protocol::Proof &b);

}  // namespace xffl::bootstrap::auth

#endif
