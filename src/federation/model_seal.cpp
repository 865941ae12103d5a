#include "federation/model_seal.h"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include <sstream>
#include <vector>

#include "common/error.h"
#include "common/key_derivation.h"

namespace xffl::federation {

namespace {

constexpr const char *kKeyLabel = "xffl-heal/1 key";
constexpr const char *kMacLabel = "xffl-heal/1";

void put_u64(std::vector<uint8_t> &out, uint64_t value) {
  for (int shift = 56; shift >= 0; shift -= 8) out.push_back(static_cast<uint8_t>(value >> shift));
}

std::array<uint8_t, 32> derive_heal_key(const std::string &secret, const std::string &job_id) {
  const std::string label = kKeyLabel;
  return derive_key_sha256(secret, job_id, std::vector<uint8_t>(label.begin(), label.end()), "federation: the heal key");
}

}  // namespace

std::string describe(const SealContext &context) {
  std::ostringstream text;
  text << "epoch " << context.epoch << " round " << context.round << " shard " << context.shard << " from facility "
       << context.sender << " to facility " << context.receiver;
  return text.str();
}

ModelSealer::ModelSealer(const std::string &secret, const std::string &job_id, const SealContext &context)
    : what_(context) {
  std::array<uint8_t, 32> key = derive_heal_key(secret, job_id);
  EVP_MAC *mac = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
  context_ = mac ? EVP_MAC_CTX_new(mac) : nullptr;
  EVP_MAC_free(mac);  // the context keeps its own reference
  char digest[] = "SHA256";
  OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0), OSSL_PARAM_construct_end()};
  const bool ok = context_ && EVP_MAC_init(context_, key.data(), key.size(), params) == 1;
  OPENSSL_cleanse(key.data(), key.size());
  if (!ok) {
    EVP_MAC_CTX_free(context_);
    context_ = nullptr;
    fail(XFFL_EINTERNAL, "federation: OpenSSL refused HMAC-SHA-256 for the heal transfer of ", describe(context));
  }
  std::vector<uint8_t> header(kMacLabel, kMacLabel + std::char_traits<char>::length(kMacLabel));
  put_u64(header, static_cast<uint64_t>(context.epoch));
  put_u64(header, static_cast<uint64_t>(context.round));
  put_u64(header, static_cast<uint64_t>(context.shard));
  put_u64(header, static_cast<uint64_t>(context.sender));
  put_u64(header, static_cast<uint64_t>(context.receiver));
  if (EVP_MAC_update(context_, header.data(), header.size()) != 1) {
    EVP_MAC_CTX_free(context_);
    context_ = nullptr;
    fail(XFFL_EINTERNAL, "federation: HMAC-SHA-256 failed on the header of ", describe(context));
  }
}

ModelSealer::~ModelSealer() { EVP_MAC_CTX_free(context_); }

void ModelSealer::check_open(const char *doing) const {
  if (finished_) fail(XFFL_ESTATE, "federation: the seal of ", describe(what_), " is already finished (", doing, ")");
}

void ModelSealer::update(const void *data, size_t bytes) {
  check_open("update");
  if (bytes == 0) return;
  if (!data) fail(XFFL_EINVAL, "federation: null data of ", bytes, " bytes for the seal of ", describe(what_));
  if (EVP_MAC_update(context_, static_cast<const unsigned char *>(data), bytes) != 1)
    fail(XFFL_EINTERNAL, "federation: HMAC-SHA-256 failed on ", bytes, " bytes of ", describe(what_));
  bytes_ += bytes;
}

Seal ModelSealer::finish() {
  check_open("finish");
  std::vector<uint8_t> trailer;
  put_u64(trailer, bytes_);
  Seal seal{};
  size_t length = 0;
  finished_ = true;
  if (EVP_MAC_update(context_, trailer.data(), trailer.size()) != 1 ||
      EVP_MAC_final(context_, seal.data(), &length, seal.size()) != 1 || length != seal.size())
    fail(XFFL_EINTERNAL, "federation: HMAC-SHA-256 could not finish the seal of ", describe(what_));
  return seal;
}

void ModelSealer::verify(const Seal &received) {
  const uint64_t bytes = bytes_;
  Seal expected = finish();
  if (CRYPTO_memcmp(expected.data(), received.data(), expected.size()) != 0)
    fail(XFFL_EAUTH, "federation: the heal transfer of ", describe(what_), " (", bytes,
         " bytes) does not match its seal: altered, replayed, misdirected or sealed with another job secret; "
         "it is not used");
}

Seal seal_model(const std::string &secret, const std::string &job_id, const SealContext &context, const void *data,
                size_t bytes) {
  ModelSealer sealer(secret, job_id, context);
  sealer.update(data, bytes);
  return sealer.finish();
}

void verify_model_seal(const std::string &secret, const std::string &job_id, const SealContext &context,
                       const void *data, size_t bytes, const Seal &received) {
  ModelSealer sealer(secret, job_id, context);
  sealer.update(data, bytes);
  sealer.verify(received);
}

}  // namespace xffl::federation
