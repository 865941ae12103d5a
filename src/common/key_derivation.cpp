#include "common/key_derivation.h"

#include <openssl/evp.h>
#include <openssl/kdf.h>

#include "common/error.h"

namespace xffl {

Key256 derive_key_sha256(const std::string &secret, const std::string &salt, const std::vector<uint8_t> &info,
                         const char *what) {
  Key256 key{};
  EVP_PKEY_CTX *kdf = EVP_PKEY_CTX_new_id(EVP_PKEY_HKDF, nullptr);
  size_t length = key.size();
  const bool ok = kdf && EVP_PKEY_derive_init(kdf) > 0 && EVP_PKEY_CTX_set_hkdf_md(kdf, EVP_sha256()) > 0 &&
                  EVP_PKEY_CTX_set1_hkdf_salt(kdf, reinterpret_cast<const unsigned char *>(salt.data()),
                                              static_cast<int>(salt.size())) > 0 &&
                  EVP_PKEY_CTX_set1_hkdf_key(kdf, reinterpret_cast<const unsigned char *>(secret.data()),
                                             static_cast<int>(secret.size())) > 0 &&
                  EVP_PKEY_CTX_add1_hkdf_info(kdf, info.data(), static_cast<int>(info.size())) > 0 &&
                  EVP_PKEY_derive(kdf, key.data(), &length) > 0 && length == key.size();
  EVP_PKEY_CTX_free(kdf);
  if (!ok) fail(XFFL_EINTERNAL, what, ": OpenSSL could not derive the key with HKDF-SHA256");
  return key;
}

}  // namespace xffl
