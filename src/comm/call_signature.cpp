#include "comm/call_signature.h"

#include <sstream>

#include "comm/dtype.h"

namespace xffl::comm {

namespace {

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

}  // namespace

bool operator==(const CallSignature &a, const CallSignature &b) {
  return a.kind == b.kind && a.dtype == b.dtype && a.op == b.op && a.root == b.root && a.count == b.count;
}

uint8_t signature_bits(const CallSignature &s) {
  uint64_t hash = mix(static_cast<uint64_t>(s.kind));
  hash = mix(hash ^ s.count);
  hash = mix(hash ^ static_cast<uint32_t>(s.dtype));
  hash = mix(hash ^ static_cast<uint32_t>(s.op));
  hash = mix(hash ^ static_cast<uint32_t>(s.root));
  return static_cast<uint8_t>(hash);
}

std::string describe_call(const CallSignature &s) {
  std::ostringstream text;
  text << kind_name(s.kind);
  if (s.kind == CallKind::Barrier) return text.str();
  text << " of count " << s.count << " " << dtype_text(s.dtype);
  if (s.op >= 0) text << ", op " << op_text(s.op);
  if (s.root >= 0) text << ", root " << s.root;
  return text.str();
}

std::string describe_difference(int their_rank, const CallSignature &theirs, int my_rank, const CallSignature &mine) {
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

}  // namespace xffl::comm
