#include "bootstrap/auth.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "common/error.h"

namespace xffl::bootstrap::auth {

protocol::Nonce random_nonce() {
  protocol::Nonce nonce{};
  if (RAND_bytes(nonce.data(), static_cast<int>(nonce.size())) != 1)
    fail(XFFL_EINTERNAL, "OpenSSL could not produce random bytes for the store's authentication nonce");
  return nonce;
}

protocol::Proof proof(Side side, const std::string &token, uint32_t world_size, uint32_t rank,
                      const std::string &job_id, const protocol::Nonce &client_nonce,
                      const protocol::Nonce &server_nonce) {
  wire::PayloadWriter message;
  const std::string label = side == Side::Client ? "xffl-store/1 client" : "xffl-store/1 server";
  message.text(label);
  message.u32(world_size);
  message.u32(rank);
  message.text(job_id);
  message.fixed(client_nonce.data(), client_nonce.size());
  message.fixed(server_nonce.data(), server_nonce.size());
  std::vector<uint8_t> bytes = message.take();

  protocol::Proof out{};
  unsigned int length = 0;
  if (!HMAC(EVP_sha256(), token.data(), static_cast<int>(token.size()), bytes.data(), bytes.size(), out.data(),
            &length) ||
      length != out.size())
    fail(XFFL_EINTERNAL, "OpenSSL could not compute HMAC-SHA256 for the store's authentication");
  return out;
}

bool proofs_equal(const protocol::Proof &a, const protocol::Proof &b) {
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace xffl::bootstrap::auth
