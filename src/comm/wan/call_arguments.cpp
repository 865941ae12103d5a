#include "comm/wan/call_arguments.h"

#include <sstream>

#include "comm/dtype.h"
#include "comm/wan/framing.h"

namespace xffl::comm::wan {

namespace {

constexpr uint32_t kNoticeMagic = 0x584e4d31;  // "XNM1"

const char *kind_name(CallKind kind) {
  switch (kind) {
    case CallKind::Barrier: return "barrier";
    case CallKind::Allreduce: return "allreduce";
    case CallKind::Broadcast: return "broadcast";
    case CallKind::Allgather: return "allgather";
    case CallKind::ReduceScatter: return "reduce_scatter";
  }
  return "an unknown collective";
}

std::string dtype_text(int32_t dtype) {
  return valid_dtype(dtype) ? dtype_name(static_cast<xffl_dtype_t>(dtype)) : "dtype " + std::to_string(dtype);
}

std::string op_text(int32_t op) {
  return valid_redop(op) ? redop_name(static_cast<xffl_redop_t>(op)) : "op " + std::to_string(op);
}

uint64_t mix(uint64_t value) {  // splitmix64's finaliser
  value = (value ^ (value >> 30)) * 0xbf58476d1ce4e5b9ull;
  value = (value ^ (value >> 27)) * 0x94d049bb133111ebull;
  return value ^ (value >> 31);
}

void put_call(uint8_t *out, const CallArguments &call) {
  put_le(out, static_cast<uint32_t>(call.kind), 4);
  put_le(out + 4, static_cast<uint32_t>(call.dtype), 4);
  put_le(out + 8, static_cast<uint32_t>(call.op), 4);
  put_le(out + 12, static_cast<uint32_t>(call.root), 4);
  put_le(out + 16, call.count, 8);
}

CallArguments get_call(const uint8_t *in) {
  CallArguments call;
  call.kind = static_cast<CallKind>(static_cast<int32_t>(get_le(in, 4)));
  call.dtype = static_cast<int32_t>(get_le(in + 4, 4));
  call.op = static_cast<int32_t>(get_le(in + 8, 4));
  call.root = static_cast<int32_t>(get_le(in + 12, 4));
  call.count = get_le(in + 16, 8);
  return call;
}

}  // namespace

bool operator==(const CallArguments &a, const CallArguments &b) {
  return a.kind == b.kind && a.dtype == b.dtype && a.op == b.op && a.root == b.root && a.count == b.count;
}

uint8_t call_check(const CallArguments &call) {
  uint64_t hash = mix(static_cast<uint64_t>(call.kind));
  hash = mix(hash ^ call.count);
  hash = mix(hash ^ static_cast<uint32_t>(call.dtype));
  hash = mix(hash ^ static_cast<uint32_t>(call.op));
  hash = mix(hash ^ static_cast<uint32_t>(call.root));
  return static_cast<uint8_t>(hash);
}

std::string describe_call(const CallArguments &call) {
  std::ostringstream text;
  text << kind_name(call.kind);
  if (call.kind == CallKind::Barrier) return text.str();
  text << " of count " << call.count << " " << dtype_text(call.dtype);
  if (call.op >= 0) text << ", op " << op_text(call.op);
  if (call.root >= 0) text << ", root " << call.root;
  return text.str();
}

std::string describe_difference(int their_rank, const CallArguments &theirs, int my_rank, const CallArguments &mine) {
  std::ostringstream text;
  const auto both = [&](const char *what, const std::string &their_value, const std::string &my_value) {
    text << "rank " << their_rank << " called with " << what << their_value << ", rank " << my_rank << " with "
         << what << my_value;
  };
  if (theirs.kind != mine.kind)
    text << "rank " << their_rank << " called " << describe_call(theirs) << ", rank " << my_rank << " "
         << describe_call(mine);
  else if (theirs.count != mine.count)
    both("count ", std::to_string(theirs.count), std::to_string(mine.count));
  else if (theirs.dtype != mine.dtype)
    both("dtype ", dtype_text(theirs.dtype), dtype_text(mine.dtype));
  else if (theirs.op != mine.op)
    both("op ", op_text(theirs.op), op_text(mine.op));
  else if (theirs.root != mine.root)
    both("root ", std::to_string(theirs.root), std::to_string(mine.root));
  else
    text << "rank " << their_rank << " and rank " << my_rank << " called " << describe_call(mine);
  return text.str();
}

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
