// The pairing hello of xffl-relay (comm/wan/relay_hello.h): what encodes decodes to the same fields and
// key; every malformed hello is refused with its reason; the reply and HOST:PORT parsing.
#include <cstring>
#include <string>

#include "comm/wan/framing.h"
#include "comm/wan/relay_hello.h"

// cmocka last: its fail() macro would rewrite xffl::fail in the headers above.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

namespace {

using namespace xffl::comm::wan;

RelayHello sample() {
  RelayHello h;
  h.side = RelaySide::kOwner;
  h.caller = 3;
  h.owner = 0x7ffffffe;
  h.tag = 0x0123456789abcdefULL;
  h.serial = 42;
  h.stream = 5;
  h.streams = 6;
  for (size_t i = 0; i < h.job.size(); ++i) h.job[i] = static_cast<uint8_t>(0xa0 + i);
  return h;
}

void round_trip(void **) {
  const RelayHello h = sample();
  const RelayHelloBytes bytes = encode_relay_hello(h);
  assert_int_equal(bytes.size(), 60);
  assert_memory_equal(bytes.data(), "XFFLRLY1", 8);
  std::string why;
  const std::optional<RelayHello> back = decode_relay_hello(bytes.data(), &why);
  if (!back) fail_msg("refused: %s", why.c_str());
  assert_true(back->side == RelaySide::kOwner);
  assert_int_equal(back->caller, 3);
  assert_int_equal(back->owner, 0x7ffffffe);
  assert_true(back->tag == h.tag);
  assert_int_equal(back->serial, 42);
  assert_int_equal(back->stream, 5);
  assert_int_equal(back->streams, 6);
  assert_true(back->key() == h.key());
  // The two sides of one stream have one key; any other field makes another.
  RelayHello caller = h;
  caller.side = RelaySide::kCaller;
  caller.streams = 64;  // not part of the key: the wan handshake tells other settings
  assert_true(caller.key() == h.key());
  for (int field = 0; field < 6; ++field) {
    RelayHello other = h;
    switch (field) {
      case 0: other.caller = 4; break;
      case 1: other.owner = 1; break;
      case 2: other.tag ^= 1; break;
      case 3: other.serial = 43; break;
      case 4: other.stream = 4; break;
      case 5: other.job[15] ^= 1; break;
    }
    assert_false(other.key() == h.key());
  }
}

void malformed_hellos_are_refused(void **) {
  struct Case {
    size_t offset;
    int bytes;
    uint64_t value;
    const char *why;
  } cases[] = {
      {0, 8, 0x31594c524c464659ULL, "magic"},      // one letter off
      {8, 4, 2, "side 2 is neither"},
      {12, 4, 0x80000000u, "is not below 2^31"},   // caller
      {16, 4, 0xffffffffu, "is not below 2^31"},   // owner
      {16, 4, 3, "caller and owner are both rank 3"},
      {40, 4, 0, "0 streams is outside [1, 64]"},
      {40, 4, 65, "65 streams is outside [1, 64]"},
      {36, 4, 6, "stream 6 is not below 6 streams"},
  };
  for (const Case &c : cases) {
    RelayHelloBytes bytes = encode_relay_hello(sample());
    put_le(bytes.data() + c.offset, c.value, c.bytes);
    std::string why;
    if (decode_relay_hello(bytes.data(), &why)) fail_msg("accepted a hello with %s", c.why);
    if (why.find(c.why) == std::string::npos) fail_msg("\"%s\" lacks \"%s\"", why.c_str(), c.why);
  }
  // Garbage: every byte of an HTTP request, and zeros.
  RelayHelloBytes text{};
  const char *request = "GET / HTTP/1.1\r\nHost: relay\r\nUser-Agent: scanner/1.0\r\nAccept: */*\r\n\r\n";
  std::memcpy(text.data(), request, text.size());
  assert_false(decode_relay_hello(text.data()).has_value());
  RelayHelloBytes zeros{};
  assert_false(decode_relay_hello(zeros.data()).has_value());
}

void replies_and_addresses(void **) {
  for (RelayStatus status : {RelayStatus::kPaired, RelayStatus::kDuplicate, RelayStatus::kUnpaired, RelayStatus::kFull}) {
    const auto bytes = encode_relay_reply(status, 600);
    RelayStatus back{};
    uint32_t seconds = 0;
    assert_true(decode_relay_reply(bytes.data(), &back, &seconds));
    assert_true(back == status);
    assert_int_equal(seconds, 600);
    assert_true(std::strlen(relay_status_text(status)) > 0);
  }
  uint8_t unknown[kRelayReplyBytes] = {4, 0, 0, 0, 0, 0, 0, 0};
  RelayStatus status{};
  uint32_t seconds = 0;
  assert_false(decode_relay_reply(unknown, &status, &seconds));

  std::string host, why;
  int port = 0;
  assert_true(split_host_port("gateway.example:7100", false, &host, &port, &why));
  assert_string_equal(host.c_str(), "gateway.example");
  assert_int_equal(port, 7100);
  assert_true(split_host_port("[::1]:9", false, &host, &port, &why));
  assert_string_equal(host.c_str(), "::1");
  assert_true(split_host_port("127.0.0.1:0", true, &host, &port, &why));
  assert_int_equal(port, 0);
  const char *bad[] = {"127.0.0.1:0", "127.0.0.1", ":80", "host:", "host:65536", "host:8x", "a b:80", "host:-1"};
  for (const char *text : bad)
    if (split_host_port(text, false, &host, &port, &why)) fail_msg("'%s' accepted", text);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(round_trip),
      cmocka_unit_test(malformed_hellos_are_refused),
      cmocka_unit_test(replies_and_addresses),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
