// The seal of a heal transfer (DESIGN.md section 7): when a facility is admitted, each shard of the
// current model crosses the WAN once, from one surviving facility's sender to the joining facility's
// crossing rank, and is verified before use. The seal is HMAC-SHA-256 over the shard's bytes.
//
// Key: HKDF-SHA256(ikm = the job secret, salt = the job id, info = "xffl-heal/1 key"), one per job.
// MAC input: "xffl-heal/1", then epoch, round, shard index, sender facility, receiver facility (each
// 64-bit big-endian), then the shard's bytes, then their count. A transfer replayed from another round or
// epoch, sent to another facility or shard, cut short or extended, fails like a flipped byte.
//
// Streaming: update() any number of times, with chunks of any size (0 included); the seal depends on
// the bytes only, not on how they were cut.
#ifndef XFFL_SRC_FEDERATION_MODEL_SEAL_H
#define XFFL_SRC_FEDERATION_MODEL_SEAL_H

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

typedef struct evp_mac_ctx_st EVP_MAC_CTX;

namespace xffl::federation {

constexpr size_t kSealBytes = 32;
using Seal = std::array<uint8_t, kSealBytes>;

// What one heal transfer is: bound into its MAC so that it is valid for this transfer only.
struct SealContext {
  int64_t epoch = 0;
  int64_t round = 0;
  int shard = 0;
  int sender = 0;    // facility index
  int receiver = 0;  // facility index
};

// "epoch 3 round 7 shard 1 from facility 0 to facility 2", for messages.
std::string describe(const SealContext &context);

// One seal being computed (sender) or checked (receiver). Not thread-safe; not copyable.
class ModelSealer {
 public:
  // Throws xffl::Error(XFFL_EINTERNAL) when OpenSSL fails.
  ModelSealer(const std::string &secret, const std::string &job_id, const SealContext &context);
  ~ModelSealer();
  ModelSealer(const ModelSealer &) = delete;
  ModelSealer &operator=(const ModelSealer &) = delete;

  // Adds the next chunk of the shard (bytes may be 0; data may then be null).
  void update(const void *data, size_t bytes);
  // The seal over every chunk added; the sealer is then spent (XFFL_ESTATE on any later call).
  Seal finish();
  // finish(), then compares with `received` in constant time; throws xffl::Error(XFFL_EAUTH) naming the
  // transfer (describe()) and the byte count when they differ.
  void verify(const Seal &received);

 private:
  void check_open(const char *doing) const;

  EVP_MAC_CTX *context_ = nullptr;
  SealContext what_;
  uint64_t bytes_ = 0;
  bool finished_ = false;
};

// One-shot forms of the above.
Seal seal_model(const std::string &secret, const std::string &job_id, const SealContext &context, const void *data,
                size_t bytes);
void verify_model_seal(const std::string &secret, const std::string &job_id, const SealContext &context,
                       const void *data, size_t bytes, const Seal &received);

}  // namespace xffl::federation

#endif
