// The heal transfer's seal (src/federation/model_seal.h): HMAC-SHA-256 under a key from the job secret,
// bound to epoch, round, shard, sender and receiver. A correct transfer verifies, in any chunking; one
// flipped byte, another epoch / round / shard / sender / receiver, another secret or job, a truncated or
// extended transfer: XFFL_EAUTH naming the transfer.
#include <cstdint>
#include <string>
#include <vector>

#include "federation/model_seal.h"
#include "bootstrap_test.h"  // last: cmocka's fail() macro

using bootstrap_test::expect_failure;
using bootstrap_test::expect_ok;
using bootstrap_test::outcome_of;
using namespace xffl::federation;

namespace {

const std::string kSecret = "heal-secret";
const std::string kJob = "job-7";
const SealContext kContext{3, 42, 1, 0, 2};

std::vector<uint8_t> shard_bytes(size_t count) {
  std::vector<uint8_t> bytes(count);
  for (size_t i = 0; i < count; ++i) bytes[i] = static_cast<uint8_t>(i * 131 + 7);
  return bytes;
}

bootstrap_test::Outcome verify(const SealContext &context, const std::vector<uint8_t> &bytes, const Seal &seal,
                               const std::string &secret = kSecret, const std::string &job = kJob) {
  return outcome_of([&] { verify_model_seal(secret, job, context, bytes.data(), bytes.size(), seal); });
}

// The sealed shard verifies, for any size (0 included) and however the bytes are cut into chunks.
void test_correct_transfer_verifies(void **) {
  for (size_t count : {size_t{0}, size_t{1}, size_t{31}, size_t{4096}, size_t{100003}}) {
    std::vector<uint8_t> bytes = shard_bytes(count);
    Seal seal = seal_model(kSecret, kJob, kContext, bytes.data(), bytes.size());
    expect_ok(verify(kContext, bytes, seal));
    for (size_t chunk : {size_t{1}, size_t{7}, size_t{65536}}) {
      ModelSealer streamed(kSecret, kJob, kContext);
      for (size_t at = 0; at < count; at += chunk) streamed.update(bytes.data() + at, std::min(chunk, count - at));
      streamed.update(nullptr, 0);
      assert_true(streamed.finish() == seal);
    }
  }
}

// Every alteration is refused with XFFL_EAUTH naming the transfer.
void test_altered_transfers_are_refused(void **) {
  std::vector<uint8_t> bytes = shard_bytes(4096);
  Seal seal = seal_model(kSecret, kJob, kContext, bytes.data(), bytes.size());
  const std::vector<std::string> named = {"epoch 3 round 42 shard 1 from facility 0 to facility 2", "4096 bytes"};

  std::vector<uint8_t> flipped = bytes;
  flipped[1234] ^= 0x10;
  expect_failure(verify(kContext, flipped, seal), XFFL_EAUTH, named);
  Seal bad_seal = seal;
  bad_seal[31] ^= 1;
  expect_failure(verify(kContext, bytes, bad_seal), XFFL_EAUTH, named);

  SealContext other = kContext;
  other.epoch = 4;
  expect_failure(verify(other, bytes, seal), XFFL_EAUTH, {"epoch 4 round 42"});
  other = kContext;
  other.round = 41;
  expect_failure(verify(other, bytes, seal), XFFL_EAUTH, {"round 41"});
  other = kContext;
  other.shard = 0;
  expect_failure(verify(other, bytes, seal), XFFL_EAUTH, {"shard 0"});
  other = kContext;
  other.sender = 1;
  expect_failure(verify(other, bytes, seal), XFFL_EAUTH, {"from facility 1"});
  other = kContext;
  other.receiver = 1;
  expect_failure(verify(other, bytes, seal), XFFL_EAUTH, {"to facility 1"});

  expect_failure(verify(kContext, bytes, seal, "another-secret"), XFFL_EAUTH, named);
  expect_failure(verify(kContext, bytes, seal, kSecret, "job-8"), XFFL_EAUTH, named);

  std::vector<uint8_t> cut(bytes.begin(), bytes.end() - 1);
  expect_failure(verify(kContext, cut, seal), XFFL_EAUTH, {"4095 bytes"});
  std::vector<uint8_t> longer = bytes;
  longer.push_back(0);
  expect_failure(verify(kContext, longer, seal), XFFL_EAUTH, {"4097 bytes"});
}

// A spent sealer and null data are clear errors, not crashes.
void test_misuse_is_an_error(void **) {
  ModelSealer sealer(kSecret, kJob, kContext);
  expect_failure(outcome_of([&] { sealer.update(nullptr, 8); }), XFFL_EINVAL, {"null data of 8 bytes"});
  sealer.finish();
  expect_failure(outcome_of([&] { sealer.finish(); }), XFFL_ESTATE, {"already finished"});
  expect_failure(outcome_of([&] { sealer.update("x", 1); }), XFFL_ESTATE, {"already finished"});
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_correct_transfer_verifies),
      cmocka_unit_test(test_altered_transfers_are_refused),
      cmocka_unit_test(test_misuse_is_an_error),
  };
  return cmocka_run_group_tests_name("heal transfer seal", tests, nullptr, nullptr);
}
