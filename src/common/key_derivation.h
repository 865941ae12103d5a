// Keys derived from the job's secret with HKDF-SHA256 (RFC 5869, through OpenSSL): one function for
// every key xffl derives (the wan transport's stream keys, comm/wan/wan_crypto.h; the heal transfer's
// seal, federation/model_seal.h), each with its own label and context in `info`, so no two uses ever
// share a key.
#ifndef XFFL_SRC_COMMON_KEY_DERIVATION_H
#define XFFL_SRC_COMMON_KEY_DERIVATION_H

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace xffl {

using Key256 = std::array<uint8_t, 32>;

// HKDF-SHA256(ikm = secret, salt, info), 32 bytes. An empty secret is accepted (callers refuse it
// where it matters). Throws xffl::Error(XFFL_EINTERNAL) naming `what` when OpenSSL fails.
Key256 derive_key_sha256(const std::string &secret, const std::string &salt, const std::vector<uint8_t> &info,
                         const char *what);

}  // namespace xffl

#endif
