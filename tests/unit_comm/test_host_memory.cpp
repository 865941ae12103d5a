// Memory the UCX path keeps between collectives: the algorithms' ScratchStack (LIFO, reused, large
// needs met and given back) and the send staging pool (which messages it copies, its bound, reuse).
#include <cstring>
#include <vector>

#include "comm/algorithms/scratch.h"
#include "comm/huge_pages.h"
#include "comm/ucx/send_staging.h"

// cmocka last: its fail() macro would rewrite xffl::fail in the headers above.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

using namespace xffl::comm;

namespace {

// A transport that lends a stack, as UcxTransport does (or none, as the unit tests' mailboxes).
class StackTransport final : public algorithms::PointToPoint {
 public:
  explicit StackTransport(bool lends = true) : lends_(lends) {}
  int size() const override { return 1; }
  int index() const override { return 0; }
  algorithms::RequestId send(int, const void *, size_t, algorithms::Step) override { return 0; }
  algorithms::RequestId recv(int, void *, size_t, algorithms::Step) override { return 0; }
  void wait(algorithms::RequestId) override {}
  void wait_all() override {}
  algorithms::ScratchStack *scratch_stack() override { return lends_ ? &stack : nullptr; }
  algorithms::ScratchStack stack;

 private:
  bool lends_;
};

void huge_page_blocks_are_aligned_and_rounded(void **) {
  HugePageBlock block(1);
  assert_int_equal(block.size(), kHugePageBytes);
  assert_int_equal(reinterpret_cast<uintptr_t>(block.data()) % kHugePageBytes, 0);
  std::memset(block.data(), 7, block.size());  // all of it is usable
  HugePageBlock moved = std::move(block);
  assert_null(block.data());
  assert_int_equal(moved.data()[kHugePageBytes - 1], 7);
  assert_int_equal(HugePageBlock(0).size(), 0);
}

void scratch_is_reused_across_calls_and_nests(void **) {
  StackTransport p2p;
  unsigned char *first;
  {
    algorithms::Scratch outer(p2p, 1000);
    first = outer.data();
    algorithms::Scratch inner(p2p, 3000);  // nested (a widened copy around a ring's staging)
    assert_true(inner.data() >= outer.data() + 1000);  // no overlap
    std::memset(outer.data(), 1, 1000);
    std::memset(inner.data(), 2, 3000);
    assert_int_equal(outer.data()[999], 1);
  }
  algorithms::Scratch again(p2p, 1000);
  assert_ptr_equal(again.data(), first);  // the same memory next time: no new pages
}

void scratch_beyond_what_is_kept_is_given_back(void **) {
  StackTransport p2p;
  const size_t big = algorithms::ScratchStack::kRetainedBytes + 1;
  {
    algorithms::Scratch huge(p2p, big);
    huge.data()[big - 1] = 9;
    assert_int_equal(huge.data()[big - 1], 9);
  }
  assert_true(p2p.stack.retained() <= algorithms::ScratchStack::kRetainedBytes);
  {
    algorithms::Scratch small(p2p, 100);  // grows the kept block while nothing is held
    algorithms::Scratch overflow(p2p, 8 << 20);  // more than the block: its own memory, LIFO still holds
    overflow.data()[(8 << 20) - 1] = 1;
  }
  algorithms::Scratch after(p2p, 100);
  assert_non_null(after.data());
}

void a_transport_without_a_stack_uses_the_heap(void **) {
  StackTransport p2p(/*lends=*/false);
  algorithms::Scratch scratch(p2p, 0);
  assert_non_null(scratch.data());
  assert_int_equal(p2p.stack.retained(), 0);
}

void staging_copies_only_large_messages_within_a_slot(void **) {
  ucx::SendStaging staging;
  std::vector<unsigned char> message(ucx::SendStaging::kSlotBytes + 1, 5);
  assert_null(staging.stage(message.data(), ucx::SendStaging::kMinBytes - 1));  // small: UCX sends it eagerly
  assert_null(staging.stage(message.data(), message.size()));                    // larger than a slot
  void *slot = staging.stage(message.data(), ucx::SendStaging::kMinBytes);
  assert_non_null(slot);
  assert_int_equal(static_cast<unsigned char *>(slot)[ucx::SendStaging::kMinBytes - 1], 5);
  staging.release(slot);
  assert_ptr_equal(staging.stage(message.data(), ucx::SendStaging::kSlotBytes), slot);  // reused, cache-warm
}

void staging_is_bounded_and_abandoned_slots_never_come_back(void **) {
  ucx::SendStaging staging;
  std::vector<unsigned char> message(ucx::SendStaging::kMinBytes, 1);
  std::vector<void *> held;
  for (size_t i = 0; i < ucx::SendStaging::kMaxSlots; ++i) held.push_back(staging.stage(message.data(), message.size()));
  for (void *slot : held) assert_non_null(slot);
  assert_false(staging.has_free_slot());
  assert_null(staging.stage(message.data(), message.size()));  // the caller sends from its own buffer
  // held.back() is never released, as after an abandoned send: the others still cycle.
  staging.release(held.front());
  assert_ptr_equal(staging.stage(message.data(), message.size()), held.front());
  assert_int_equal(staging.slots(), ucx::SendStaging::kMaxSlots);
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(huge_page_blocks_are_aligned_and_rounded),
      cmocka_unit_test(scratch_is_reused_across_calls_and_nests),
      cmocka_unit_test(scratch_beyond_what_is_kept_is_given_back),
      cmocka_unit_test(a_transport_without_a_stack_uses_the_heap),
      cmocka_unit_test(staging_copies_only_large_messages_within_a_slot),
      cmocka_unit_test(staging_is_bounded_and_abandoned_slots_never_come_back),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
