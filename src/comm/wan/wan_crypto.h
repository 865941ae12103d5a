// Encryption in transit for the cross-facility transport (XFFL_OPT_WAN_ENCRYPTION): AEAD frames
// (AES-256-GCM or ChaCha20-Poly1305, through OpenSSL EVP) with keys from HKDF-SHA256.
//
// Keys: one per direction of one TCP stream, HKDF-SHA256 over the job's secret (XFFL_AUTH_TOKEN)
// with the job id as salt and, as info, the cipher, the group (tag, serial), the sender's and the
// receiver's global ranks, the stream index and both handshake nonces (fresh random bytes from each
// side of each connection: the epoch). Two directions, two streams, two groups or two connections of
// the same group never share a key, so the nonces below never repeat under one key.
//
// Nonces: 4 zero bytes then a 64-bit big-endian frame counter, kept by each side: the sender counts the
// frames it seals, the receiver the frames it opens. A key seals at most 2^64 - 1 frames (an error
// before the counter could wrap), so a (key, nonce) pair is never used twice: GCM and Poly1305 lose
// both confidentiality and integrity on a repeated nonce. Since the receiver uses its own count, a
// frame replayed, dropped or reordered on the link fails to authenticate, like a flipped bit.
//
// Each frame's header (framing.h) is the AAD: length, message and offset are authenticated too.
#ifndef XFFL_SRC_COMM_WAN_WAN_CRYPTO_H
#define XFFL_SRC_COMM_WAN_WAN_CRYPTO_H

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "xffl/types.h"

typedef struct evp_cipher_ctx_st EVP_CIPHER_CTX;

namespace xffl::comm::wan {

constexpr size_t kKeyBytes = 32;
constexpr size_t kTagBytes = 16;
constexpr size_t kNonceBytes = 12;
constexpr size_t kHandshakeNonceBytes = 32;

using Key = std::array<uint8_t, kKeyBytes>;
using HandshakeNonce = std::array<uint8_t, kHandshakeNonceBytes>;

// "none", "aes-256-gcm", "chacha20-poly1305"; "unknown" otherwise.
const char *encryption_name(int encryption);

// What makes one direction of one stream's key unique.
struct KeyContext {
  uint64_t group_tag = 0;
  uint64_t group_serial = 0;
  int sender = 0;    // global rank
  int receiver = 0;  // global rank
  int stream = 0;
  HandshakeNonce dialer_nonce{};
  HandshakeNonce acceptor_nonce{};
};

// HKDF-SHA256(ikm = secret, salt = job id, info = "xffl-wan/1 key" | cipher | context). Throws
// xffl::Error(XFFL_EINTERNAL) when OpenSSL fails.
Key derive_key(xffl_wan_encryption_t cipher, const std::string &secret, const std::string &job_id,
               const KeyContext &context);

// One direction of one stream: seals (sender) or opens (receiver) frames in order, counting them.
class FrameCipher {
 public:
  // cipher must not be NONE. Throws XFFL_EINTERNAL when OpenSSL refuses.
  FrameCipher(xffl_wan_encryption_t cipher, const Key &key);
  ~FrameCipher();
  FrameCipher(const FrameCipher &) = delete;
  FrameCipher &operator=(const FrameCipher &) = delete;

  // Encrypts bytes of plain into out (may equal plain) and writes the tag, under the next nonce.
  void seal(const uint8_t *aad, size_t aad_bytes, const uint8_t *plain, size_t bytes, uint8_t *out,
            uint8_t tag[kTagBytes]);
  // Decrypts into out (may equal cipher_text) under the next nonce; false when the tag does not match
  // (out then holds unauthenticated bytes the caller must not use). The counter advances either way.
  bool open(const uint8_t *aad, size_t aad_bytes, const uint8_t *cipher_text, size_t bytes, uint8_t *out,
            const uint8_t tag[kTagBytes]);
  // Frames sealed or opened so far: the counter of the next nonce.
  uint64_t frames() const { return counter_; }
  // The nonce of frame `counter` (tests check uniqueness through it).
  static std::array<uint8_t, kNonceBytes> nonce(uint64_t counter);

 private:
  std::array<uint8_t, kNonceBytes> next_nonce();

  xffl_wan_encryption_t cipher_;
  EVP_CIPHER_CTX *context_ = nullptr;
  uint64_t counter_ = 0;
};

}  // namespace xffl::comm::wan

#endif
