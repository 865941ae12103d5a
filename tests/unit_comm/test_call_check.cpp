// The call signature of call_check.h: the tag field of the calls the mismatch tests use differ (so
// those tests depend on no hash luck), the field never leaks into the other tag fields, and the
// message names the first argument that differs with both values.
#include <string>
#include <vector>

#include "comm/ucx/call_check.h"
#include "comm/ucx/tag.h"

// cmocka last: its fail() macro would rewrite xffl::fail in the headers above.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

namespace {

using xffl::comm::CallKind;
using xffl::comm::CallSignature;

void expect_contains(const std::string &text, const std::string &part) {
  if (text.find(part) == std::string::npos) fail_msg("\"%s\" lacks \"%s\"", text.c_str(), part.c_str());
}

// Each variant the multiproc mismatch tests use against the common call, for every collective.
void tested_variants_have_distinct_tag_bits(void **) {
  for (CallKind kind : {CallKind::Allreduce, CallKind::Broadcast, CallKind::Allgather, CallKind::ReduceScatter}) {
    for (size_t count : {size_t{100}, size_t{1} << 20}) {
      const bool has_op = kind == CallKind::Allreduce || kind == CallKind::ReduceScatter;
      const int op = has_op ? XFFL_SUM : -1, root = kind == CallKind::Broadcast ? 0 : -1;
      const CallSignature common = CallSignature::of(kind, count, XFFL_I32, op, root);
      std::vector<CallSignature> variants = {CallSignature::of(kind, count - 1, XFFL_I32, op, root),
                                             CallSignature::of(kind, count, XFFL_F32, op, root)};
      if (has_op) variants.push_back(CallSignature::of(kind, count, XFFL_I32, XFFL_MAX, root));
      if (root >= 0) variants.push_back(CallSignature::of(kind, count, XFFL_I32, op, 1));
      for (const CallSignature &variant : variants) {
        assert_true(variant != common);
        assert_int_not_equal(xffl::comm::signature_bits(variant), xffl::comm::signature_bits(common));
      }
    }
  }
}

void signature_stays_in_its_field(void **) {
  using namespace xffl::comm::ucx;
  const uint64_t tag = message_tag(0xabcde, 0x1234, 7, 0xff, 300);
  assert_int_equal(signature_of(tag), 0xff);
  assert_int_equal(sender_of(tag), 7);
  assert_int_equal(sequence_of(tag), 0x34);  // mod 256
  assert_int_equal(tag & 0xff, 300 & 0xff);
  assert_int_equal(tag >> 44, 0xabcde);
  // A receive's mask ignores the signature and nothing else; notices never match a member's sender.
  assert_int_equal(message_tag(0xabcde, 0x34, 7, 0x00, 44) & kReceiveMask, message_tag(0xabcde, 0x34, 7, 0x5a, 44) & kReceiveMask);
  assert_true(kNoticeSender >= kMaxGroupSize);
}

void difference_names_argument_and_both_values(void **) {
  using xffl::comm::describe_difference;
  const CallSignature mine = CallSignature::of(CallKind::Allreduce, 100, XFFL_I32, XFFL_SUM);
  expect_contains(describe_difference(2, CallSignature::of(CallKind::Allreduce, 99, XFFL_I32, XFFL_SUM), 0, mine),
                  "rank 2 called with count 99, rank 0 with count 100");
  expect_contains(describe_difference(2, CallSignature::of(CallKind::Allreduce, 100, XFFL_F32, XFFL_SUM), 0, mine),
                  "rank 2 called with dtype f32, rank 0 with dtype i32");
  expect_contains(describe_difference(2, CallSignature::of(CallKind::Allreduce, 100, XFFL_I32, XFFL_MAX), 0, mine),
                  "rank 2 called with op max, rank 0 with op sum");
  expect_contains(describe_difference(1, CallSignature::of(CallKind::Broadcast, 100, XFFL_I32, -1, 3), 0,
                                      CallSignature::of(CallKind::Broadcast, 100, XFFL_I32, -1, 0)),
                  "rank 1 called with root 3, rank 0 with root 0");
  expect_contains(describe_difference(3, CallSignature::barrier(), 0, mine),
                  "rank 3 called barrier, rank 0 allreduce of count 100 i32, op sum");
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(tested_variants_have_distinct_tag_bits),
      cmocka_unit_test(signature_stays_in_its_field),
      cmocka_unit_test(difference_names_argument_and_both_values),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
