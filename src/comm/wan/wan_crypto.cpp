#include "comm/wan/wan_crypto.h"

#include <openssl/evp.h>

#include <algorithm>
#include <limits>
#include <vector>

#include "common/error.h"
#include "common/key_derivation.h"

namespace xffl::comm::wan {

namespace {

const EVP_CIPHER *evp_cipher(xffl_wan_encryption_t cipher) {
  switch (cipher) {
    case XFFL_WAN_ENCRYPTION_AES_256_GCM: return EVP_aes_256_gcm();
    case XFFL_WAN_ENCRYPTION_CHACHA20_POLY1305: return EVP_chacha20_poly1305();
    default: break;
  }
  fail(XFFL_EINTERNAL, "wan: cipher ", static_cast<int>(cipher), " has no EVP cipher");
}

void put_u64(std::vector<uint8_t> &out, uint64_t value) {
  for (int shift = 56; shift >= 0; shift -= 8) out.push_back(static_cast<uint8_t>(value >> shift));
}

}  // namespace

const char *encryption_name(int encryption) {
  switch (encryption) {
    case XFFL_WAN_ENCRYPTION_NONE: return "none";
    case XFFL_WAN_ENCRYPTION_AES_256_GCM: return "aes-256-gcm";
    case XFFL_WAN_ENCRYPTION_CHACHA20_POLY1305: return "chacha20-poly1305";
    default: return "unknown";
  }
}

Key derive_key(xffl_wan_encryption_t cipher, const std::string &secret, const std::string &job_id,
               const KeyContext &context) {
  const std::string label = "xffl-wan/1 key";
  std::vector<uint8_t> info(label.begin(), label.end());
  info.reserve(label.size() + 6 * sizeof(uint64_t) + context.dialer_nonce.size() + context.acceptor_nonce.size());
  put_u64(info, static_cast<uint64_t>(cipher));
  put_u64(info, context.group_tag);
  put_u64(info, context.group_serial);
  put_u64(info, static_cast<uint64_t>(context.sender));
  put_u64(info, static_cast<uint64_t>(context.receiver));
  put_u64(info, static_cast<uint64_t>(context.stream));
  info.insert(info.end(), context.dialer_nonce.begin(), context.dialer_nonce.end());
  info.insert(info.end(), context.acceptor_nonce.begin(), context.acceptor_nonce.end());

  // HKDF takes an empty key as well; set_global refuses encryption without a secret before this.
  return derive_key_sha256(secret, job_id, info, "wan: a stream key");
}

FrameCipher::FrameCipher(xffl_wan_encryption_t cipher, const Key &key) : cipher_(cipher) {
  context_ = EVP_CIPHER_CTX_new();
  // The key is set once; each frame sets only its nonce.
  if (!context_ || EVP_CipherInit_ex(context_, evp_cipher(cipher), nullptr, nullptr, nullptr, -1) != 1 ||
      EVP_CIPHER_CTX_ctrl(context_, EVP_CTRL_AEAD_SET_IVLEN, static_cast<int>(kNonceBytes), nullptr) != 1 ||
      EVP_CipherInit_ex(context_, nullptr, nullptr, key.data(), nullptr, -1) != 1) {
    EVP_CIPHER_CTX_free(context_);
    fail(XFFL_EINTERNAL, "wan: OpenSSL refused the ", encryption_name(cipher), " key");
  }
}

FrameCipher::~FrameCipher() { EVP_CIPHER_CTX_free(context_); }

std::array<uint8_t, kNonceBytes> FrameCipher::nonce(uint64_t counter) {
  std::array<uint8_t, kNonceBytes> out{};
  for (int i = 0; i < 8; ++i) out[4 + i] = static_cast<uint8_t>(counter >> (56 - 8 * i));
  return out;
}

std::array<uint8_t, kNonceBytes> FrameCipher::next_nonce() {
  if (counter_ == std::numeric_limits<uint64_t>::max())
    fail(XFFL_EINTERNAL, "wan: a stream key sealed 2^64 - 1 frames; it may not seal more");
  return nonce(counter_++);
}

void FrameCipher::seal(const uint8_t *aad, size_t aad_bytes, const uint8_t *plain, size_t bytes, uint8_t *out,
                       uint8_t tag[kTagBytes]) {
  const std::array<uint8_t, kNonceBytes> iv = next_nonce();
  int written = 0;
  bool ok = EVP_EncryptInit_ex(context_, nullptr, nullptr, nullptr, iv.data()) == 1 &&
            EVP_EncryptUpdate(context_, nullptr, &written, aad, static_cast<int>(aad_bytes)) == 1;
  size_t done = 0;
  while (ok && done < bytes) {  // EVP takes int lengths
    const int piece = static_cast<int>(std::min<size_t>(bytes - done, 1u << 30));
    ok = EVP_EncryptUpdate(context_, out + done, &written, plain + done, piece) == 1 && written == piece;
    done += static_cast<size_t>(piece);
  }
  ok = ok && EVP_EncryptFinal_ex(context_, out + done, &written) == 1 &&
       EVP_CIPHER_CTX_ctrl(context_, EVP_CTRL_AEAD_GET_TAG, static_cast<int>(kTagBytes), tag) == 1;
  if (!ok) fail(XFFL_EINTERNAL, "wan: OpenSSL could not seal a frame with ", encryption_name(cipher_));
}

bool FrameCipher::open(const uint8_t *aad, size_t aad_bytes, const uint8_t *cipher_text, size_t bytes, uint8_t *out,
                       const uint8_t tag[kTagBytes]) {
  const std::array<uint8_t, kNonceBytes> iv = next_nonce();
  int written = 0;
  bool ok = EVP_DecryptInit_ex(context_, nullptr, nullptr, nullptr, iv.data()) == 1 &&
            EVP_DecryptUpdate(context_, nullptr, &written, aad, static_cast<int>(aad_bytes)) == 1;
  size_t done = 0;
  while (ok && done < bytes) {
    const int piece = static_cast<int>(std::min<size_t>(bytes - done, 1u << 30));
    ok = EVP_DecryptUpdate(context_, out + done, &written, cipher_text + done, piece) == 1 && written == piece;
    done += static_cast<size_t>(piece);
  }
  if (!ok) fail(XFFL_EINTERNAL, "wan: OpenSSL could not open a frame with ", encryption_name(cipher_));
  if (EVP_CIPHER_CTX_ctrl(context_, EVP_CTRL_AEAD_SET_TAG, static_cast<int>(kTagBytes), const_cast<uint8_t *>(tag)) != 1)
    fail(XFFL_EINTERNAL, "wan: OpenSSL refused a frame's tag");
  return EVP_DecryptFinal_ex(context_, out + done, &written) == 1;
}

}  // namespace xffl::comm::wan
