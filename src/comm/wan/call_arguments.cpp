#include "comm/wan/call_arguments.h"

#include "comm/wan/framing.h"

namespace xffl::comm::wan {

namespace {

constexpr uint32_t kNoticeMagic = 0x584e4d31;  // "XNM1"

void put_call(uint8_t *out, const CallSignature &call) {
  put_le(out, static_cast<uint32_t>(call.kind), 4);
  put_le(out + 4, static_cast<uint32_t>(call.dtype), 4);
  put_le(out + 8, static_cast<uint32_t>(call.op), 4);
  put_le(out + 12, static_cast<uint32_t>(call.root), 4);
  put_le(out + 16, call.count, 8);
}

CallSignature get_call(const uint8_t *in) {
  CallSignature call;
  call.kind = static_cast<CallKind>(static_cast<int32_t>(get_le(in, 4)));
  call.dtype = static_cast<int32_t>(get_le(in + 4, 4));
  call.op = static_cast<int32_t>(get_le(in + 8, 4));
  call.root = static_cast<int32_t>(get_le(in + 12, 4));
  call.count = get_le(in + 16, 8);
  return call;
}

}  // namespace

// magic | notifier | culprit | culprit_known | mine (24) | theirs (24) | came | expected, little-endian.
void encode_notice(const MismatchNotice &notice, uint8_t out[kNoticeBytes]) {
  put_le(out, kNoticeMagic, 4);
  put_le(out + 4, static_cast<uint32_t>(notice.notifier), 4);
  put_le(out + 8, static_cast<uint32_t>(notice.culprit), 4);
  put_le(out + 12, notice.culprit_known ? 1 : 0, 4);
  put_call(out + 16, notice.mine);
  put_call(out + 40, notice.theirs);
  put_le(out + 64, notice.came, 8);
  put_le(out + 72, notice.expected, 8);
}

std::optional<MismatchNotice> decode_notice(const uint8_t *in, size_t bytes) {
  if (bytes != kNoticeBytes || get_le(in, 4) != kNoticeMagic) return std::nullopt;
  MismatchNotice notice;
  notice.notifier = static_cast<int32_t>(get_le(in + 4, 4));
  notice.culprit = static_cast<int32_t>(get_le(in + 8, 4));
  notice.culprit_known = get_le(in + 12, 4) != 0;
  notice.mine = get_call(in + 16);
  notice.theirs = get_call(in + 40);
  notice.came = get_le(in + 64, 8);
  notice.expected = get_le(in + 72, 8);
  return notice;
}

}  // namespace xffl::comm::wan
