// The cross-facility transport's frame encryption (comm/wan/wan_crypto.h): a sealed frame opens to the
// same bytes; any altered byte of the header (AAD), the payload or the tag fails to open; keys differ
// by direction, stream, group and connection nonces; nonces never repeat under one key, and a frame
// opened out of order fails.
#include <cstring>
#include <set>
#include <vector>

#include "comm/wan/framing.h"
#include "comm/wan/wan_crypto.h"
#include "comm/wan/wan_settings.h"

// cmocka last: its fail() macro would rewrite xffl::fail in the headers above.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

namespace {

using namespace xffl::comm::wan;

const xffl_wan_encryption_t kCiphers[] = {XFFL_WAN_ENCRYPTION_AES_256_GCM, XFFL_WAN_ENCRYPTION_CHACHA20_POLY1305};

KeyContext context() {
  KeyContext c;
  c.group_tag = 7;
  c.group_serial = 0;
  c.sender = 0;
  c.receiver = 1;
  c.stream = 0;
  c.dialer_nonce.fill(0x11);
  c.acceptor_nonce.fill(0x22);
  return c;
}

struct Sealed {
  HeaderBytes header;
  std::vector<uint8_t> body;
  uint8_t tag[kTagBytes];
};

Sealed seal_one(FrameCipher &sealer, const std::vector<uint8_t> &plain) {
  FrameHeader h;
  h.payload_bytes = static_cast<uint32_t>(plain.size());
  h.message = 3;
  h.offset = 0;
  h.total = plain.size();
  Sealed out{encode(h), std::vector<uint8_t>(plain.size()), {}};
  sealer.seal(out.header.data(), out.header.size(), plain.data(), plain.size(), out.body.data(), out.tag);
  return out;
}

std::vector<uint8_t> payload(size_t bytes) {
  std::vector<uint8_t> p(bytes);
  for (size_t i = 0; i < bytes; ++i) p[i] = static_cast<uint8_t>(i * 31 + 5);
  return p;
}

void sealed_frame_opens_to_the_same_bytes(void **) {
  for (xffl_wan_encryption_t cipher : kCiphers) {
    const Key key = derive_key(cipher, "secret", "job", context());
    FrameCipher sealer(cipher, key), opener(cipher, key);
    for (size_t bytes : {size_t{0}, size_t{1}, size_t{1000}, kFrameBytes}) {
      const std::vector<uint8_t> plain = payload(bytes);
      Sealed s = seal_one(sealer, plain);
      if (bytes) assert_true(std::memcmp(s.body.data(), plain.data(), bytes) != 0);  // not the plain text
      std::vector<uint8_t> out(bytes);
      assert_true(opener.open(s.header.data(), s.header.size(), s.body.data(), bytes, out.data(), s.tag));
      assert_true(out == plain);
    }
  }
}

// One flipped bit anywhere in a frame: header, payload or tag.
void any_altered_byte_fails_to_open(void **) {
  for (xffl_wan_encryption_t cipher : kCiphers) {
    const Key key = derive_key(cipher, "secret", "job", context());
    const std::vector<uint8_t> plain = payload(64);
    for (size_t where = 0; where < kHeaderBytes + 64 + kTagBytes; ++where) {
      FrameCipher sealer(cipher, key), opener(cipher, key);
      Sealed s = seal_one(sealer, plain);
      if (where < kHeaderBytes)
        s.header[where] ^= 0x01;
      else if (where < kHeaderBytes + 64)
        s.body[where - kHeaderBytes] ^= 0x01;
      else
        s.tag[where - kHeaderBytes - 64] ^= 0x01;
      std::vector<uint8_t> out(64);
      assert_false(opener.open(s.header.data(), s.header.size(), s.body.data(), 64, out.data(), s.tag));
    }
  }
}

// The receiver counts frames itself: a replayed or reordered frame does not open.
void reordered_or_replayed_frame_fails(void **) {
  for (xffl_wan_encryption_t cipher : kCiphers) {
    const Key key = derive_key(cipher, "secret", "job", context());
    FrameCipher sealer(cipher, key), opener(cipher, key);
    Sealed first = seal_one(sealer, payload(100));
    Sealed second = seal_one(sealer, payload(100));
    std::vector<uint8_t> out(100);
    assert_false(opener.open(second.header.data(), kHeaderBytes, second.body.data(), 100, out.data(), second.tag));
    FrameCipher replay_opener(cipher, key);
    assert_true(replay_opener.open(first.header.data(), kHeaderBytes, first.body.data(), 100, out.data(), first.tag));
    assert_false(replay_opener.open(first.header.data(), kHeaderBytes, first.body.data(), 100, out.data(), first.tag));
  }
}

// Every field of the context, the secret, the job and the cipher give another key.
void keys_differ_by_direction_stream_group_and_connection(void **) {
  std::set<Key> keys;
  const KeyContext base = context();
  std::vector<KeyContext> variants(8, base);
  std::swap(variants[1].sender, variants[1].receiver);  // the other direction
  variants[2].stream = 1;
  variants[3].group_tag = 8;
  variants[4].group_serial = 1;
  variants[5].dialer_nonce[0] ^= 1;  // another connection of the same pair
  variants[6].acceptor_nonce[31] ^= 1;
  variants[7].receiver = 2;
  for (const KeyContext &c : variants) keys.insert(derive_key(XFFL_WAN_ENCRYPTION_AES_256_GCM, "secret", "job", c));
  keys.insert(derive_key(XFFL_WAN_ENCRYPTION_CHACHA20_POLY1305, "secret", "job", base));
  keys.insert(derive_key(XFFL_WAN_ENCRYPTION_AES_256_GCM, "secret2", "job", base));
  keys.insert(derive_key(XFFL_WAN_ENCRYPTION_AES_256_GCM, "secret", "job2", base));
  assert_int_equal(keys.size(), variants.size() + 3);
  // Deterministic: both ends derive the same key.
  assert_true(derive_key(XFFL_WAN_ENCRYPTION_AES_256_GCM, "secret", "job", base) ==
              derive_key(XFFL_WAN_ENCRYPTION_AES_256_GCM, "secret", "job", base));
  // A frame sealed under one direction's key does not open under the other's.
  FrameCipher sealer(XFFL_WAN_ENCRYPTION_AES_256_GCM,
                     derive_key(XFFL_WAN_ENCRYPTION_AES_256_GCM, "secret", "job", base));
  FrameCipher other(XFFL_WAN_ENCRYPTION_AES_256_GCM,
                    derive_key(XFFL_WAN_ENCRYPTION_AES_256_GCM, "secret", "job", variants[1]));
  Sealed s = seal_one(sealer, payload(10));
  std::vector<uint8_t> out(10);
  assert_false(other.open(s.header.data(), kHeaderBytes, s.body.data(), 10, out.data(), s.tag));
}

// The nonce is the frame counter: distinct for every frame a key seals.
void nonces_never_repeat_under_one_key(void **) {
  FrameCipher sealer(XFFL_WAN_ENCRYPTION_AES_256_GCM,
                     derive_key(XFFL_WAN_ENCRYPTION_AES_256_GCM, "secret", "job", context()));
  std::set<std::array<uint8_t, kNonceBytes>> nonces;
  for (int i = 0; i < 1000; ++i) {
    nonces.insert(FrameCipher::nonce(sealer.frames()));
    seal_one(sealer, payload(8));
  }
  assert_int_equal(nonces.size(), 1000);
  assert_int_equal(sealer.frames(), 1000);
  assert_true(FrameCipher::nonce(1) != FrameCipher::nonce(1ULL << 32));  // all 64 counter bits count
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(sealed_frame_opens_to_the_same_bytes),
      cmocka_unit_test(any_altered_byte_fails_to_open),
      cmocka_unit_test(reordered_or_replayed_frame_fails),
      cmocka_unit_test(keys_differ_by_direction_stream_group_and_connection),
      cmocka_unit_test(nonces_never_repeat_under_one_key),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
