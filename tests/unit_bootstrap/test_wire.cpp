// The store's framing and messages: bounds are enforced as early as possible, and every message
// survives a round trip however the bytes are split.
#include "bootstrap/protocol.h"
#include "bootstrap/wire.h"

// cmocka last: its fail() macro would clash with std::ios::fail and xffl::fail.
#include "bootstrap_test.h"

using namespace xffl;
using namespace xffl::bootstrap;
using bootstrap_test::contains;

namespace {

template <typename Body>
std::string protocol_error_of(Body &&body) {
  try {
    body();
  } catch (const wire::ProtocolError &error) {
    return error.what();
  }
  return "";
}

std::vector<uint8_t> header(uint32_t magic, uint16_t version, uint16_t type, uint32_t length) {
  return {static_cast<uint8_t>(magic >> 24), static_cast<uint8_t>(magic >> 16), static_cast<uint8_t>(magic >> 8),
          static_cast<uint8_t>(magic),       static_cast<uint8_t>(version >> 8), static_cast<uint8_t>(version),
          static_cast<uint8_t>(type >> 8),   static_cast<uint8_t>(type),         static_cast<uint8_t>(length >> 24),
          static_cast<uint8_t>(length >> 16), static_cast<uint8_t>(length >> 8), static_cast<uint8_t>(length)};
}

void test_round_trip_byte_by_byte(void **) {
  protocol::Publish publish{"ucx/addr/3", {1, 2, 3, 4, 5}};
  protocol::Fetch fetch{"ucx/addr/7", 5000};
  std::vector<uint8_t> stream = protocol::encode(publish);
  std::vector<uint8_t> second = protocol::encode(fetch);
  stream.insert(stream.end(), second.begin(), second.end());

  wire::FrameReader reader;
  std::vector<wire::Frame> frames;
  for (uint8_t byte : stream) {
    reader.feed(&byte, 1);
    while (auto frame = reader.next()) frames.push_back(*frame);
  }
  assert_int_equal(frames.size(), 2);
  assert_true(frames[0].type == wire::Type::Publish);
  protocol::Publish got = protocol::decode_publish(frames[0].payload);
  assert_true(got.key == publish.key && got.value == publish.value);
  protocol::Fetch got_fetch = protocol::decode_fetch(frames[1].payload);
  assert_true(got_fetch.key == fetch.key);
  assert_int_equal(got_fetch.timeout_ms, 5000);
  assert_int_equal(reader.buffered(), 0);
}

void test_bad_magic_rejected_at_first_byte(void **) {
  wire::FrameReader reader;
  uint8_t byte = 'G';  // "GET / HTTP/1.1" from a stray browser
  assert_true(contains(protocol_error_of([&] { reader.feed(&byte, 1); }), "bad magic"));
}

void test_version_and_type_checked(void **) {
  wire::FrameReader old_version;
  auto bytes = header(wire::kMagic, 2, 1, 0);
  assert_true(contains(protocol_error_of([&] { old_version.feed(bytes.data(), bytes.size()); }),
                       "version 2 differs from this library's 1"));
  wire::FrameReader unknown_type;
  bytes = header(wire::kMagic, wire::kVersion, 999, 0);
  assert_true(contains(protocol_error_of([&] { unknown_type.feed(bytes.data(), bytes.size()); }), "unknown frame type 999"));
}

void test_oversized_frame_rejected_at_header(void **) {
  wire::FrameReader reader;
  auto bytes = header(wire::kMagic, wire::kVersion, static_cast<uint16_t>(wire::Type::Publish), 0x7fffffff);
  // Rejected from the header alone: nothing of the announced 2 GiB is waited for or buffered.
  assert_true(contains(protocol_error_of([&] { reader.feed(bytes.data(), bytes.size()); }), "exceeds the limit"));
}

void test_encoder_enforces_limits(void **) {
  protocol::Publish big_value{"k", std::vector<uint8_t>(wire::kMaxValue + 1)};
  assert_true(contains(protocol_error_of([&] { protocol::encode(big_value); }), "value of 1048577 bytes"));
  protocol::Publish big_key{std::string(wire::kMaxKey + 1, 'k'), {}};
  assert_true(contains(protocol_error_of([&] { protocol::encode(big_key); }), "key of 1025 bytes"));
  protocol::Hello long_job;
  long_job.job_id = std::string(wire::kMaxJobId + 1, 'j');
  assert_true(contains(protocol_error_of([&] { protocol::encode(long_job); }), "job id"));
  // The largest legal publish fits a frame.
  protocol::Publish largest{std::string(wire::kMaxKey, 'k'), std::vector<uint8_t>(wire::kMaxValue, 7)};
  assert_int_equal(protocol::encode(largest).size() - wire::kHeaderSize,
                   4 + wire::kMaxKey + 4 + wire::kMaxValue);
}

void test_decoders_reject_malformed_payloads(void **) {
  // A key length that runs past the payload.
  wire::PayloadWriter lying;
  lying.u32(100);
  lying.u8('k');
  std::vector<uint8_t> payload = lying.take();
  assert_true(contains(protocol_error_of([&] { protocol::decode_fetch(payload); }), "truncated"));
  // Trailing bytes after an exact message.
  std::vector<uint8_t> ok_with_tail = {1};
  assert_true(contains(protocol_error_of([&] { protocol::decode_ok(ok_with_tail); }), "unexpected bytes"));
  // A key length beyond 1 KiB is refused before its bytes are looked at.
  wire::PayloadWriter long_key;
  long_key.u32(5000);
  payload = long_key.take();
  assert_true(contains(protocol_error_of([&] { protocol::decode_publish(payload); }), "key of 5000 bytes"));
}

// A Ranks answer is bounded by the reader's world size: no more ranks than it, none outside it, and
// strictly ascending.
void test_ranks_list_bounded_by_world(void **) {
  std::vector<uint8_t> frame = protocol::encode(protocol::Ranks{{1, 3}});
  std::vector<uint8_t> payload(frame.begin() + wire::kHeaderSize, frame.end());
  assert_true(protocol::decode_ranks(payload, 4).ranks == std::vector<uint32_t>({1, 3}));
  assert_true(contains(protocol_error_of([&] { protocol::decode_ranks(payload, 1); }), "exceeds the limit of 1"));
  assert_true(contains(protocol_error_of([&] { protocol::decode_ranks(payload, 3); }), "rank 3 is outside [0, 3)"));
  frame = protocol::encode(protocol::Ranks{{2, 2}});
  payload.assign(frame.begin() + wire::kHeaderSize, frame.end());
  assert_true(contains(protocol_error_of([&] { protocol::decode_ranks(payload, 4); }), "not strictly ascending"));
  wire::PayloadWriter lying;  // a count far beyond the bytes that follow
  lying.u32(3);
  lying.u32(0);
  payload = lying.take();
  assert_true(contains(protocol_error_of([&] { protocol::decode_ranks(payload, 4); }), "truncated"));
  std::vector<uint8_t> departed_with_tail = {0};
  assert_true(contains(protocol_error_of([&] { protocol::decode_departed(departed_with_tail); }), "unexpected bytes"));
}

void test_failure_status_cannot_claim_success(void **) {
  wire::PayloadWriter out;
  out.i32(0);  // XFFL_OK in a failure frame: a confused peer must not turn a failure into success
  out.text("fine");
  out.u32(0);
  protocol::Failure failure = protocol::decode_failure(out.take());
  assert_int_equal(failure.status, XFFL_EINTERNAL);

  protocol::Failure barrier{XFFL_ETIMEOUT, "missing", {2, 5}};
  std::vector<uint8_t> frame = protocol::encode(barrier);
  protocol::Failure back =
      protocol::decode_failure(std::vector<uint8_t>(frame.begin() + wire::kHeaderSize, frame.end()));
  assert_int_equal(back.status, XFFL_ETIMEOUT);
  assert_true(back.ranks == std::vector<uint32_t>({2, 5}));
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_round_trip_byte_by_byte),
      cmocka_unit_test(test_bad_magic_rejected_at_first_byte),
      cmocka_unit_test(test_version_and_type_checked),
      cmocka_unit_test(test_oversized_frame_rejected_at_header),
      cmocka_unit_test(test_encoder_enforces_limits),
      cmocka_unit_test(test_decoders_reject_malformed_payloads),
      cmocka_unit_test(test_ranks_list_bounded_by_world),
      cmocka_unit_test(test_failure_status_cannot_claim_success),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
