// The process-group registry (bootstrap/group_registry.h): identities unique among live groups by
// construction, claimed alike by every member, freed only when every member is done, reused last.
#include <set>

#include "bootstrap/group_registry.h"

// cmocka last: its fail() macro would clash with xffl::fail.
#include "bootstrap_test.h"

using xffl::bootstrap::GroupClaim;
using xffl::bootstrap::GroupRegistry;

namespace {

GroupClaim claim(GroupRegistry &registry, const std::vector<int> &members, uint32_t creation) {
  auto claimed = registry.claim(GroupRegistry::key(members, creation), static_cast<uint32_t>(members.size()));
  assert_true(claimed.has_value());
  return *claimed;
}

void test_members_get_the_same_identity(void **) {
  GroupRegistry registry;
  const GroupClaim first = claim(registry, {0, 1, 2}, 0);
  const GroupClaim second = claim(registry, {0, 1, 2}, 0);
  const GroupClaim third = claim(registry, {0, 1, 2}, 0);
  assert_int_equal(first.slot, second.slot);
  assert_int_equal(first.slot, third.slot);
  assert_true(first.serial == second.serial && first.serial == third.serial);
  assert_int_equal(registry.pending_keys(), 0);  // every member claimed: the key is retired
  assert_int_equal(registry.live(), 1);
}

void test_keys_are_exact(void **) {
  // Lists that a run encoding could confuse, and creation numbers, all give distinct keys.
  std::set<std::string> keys;
  const std::vector<std::vector<int>> lists = {{0, 1}, {0, 2}, {1, 2}, {0, 1, 2}, {0}, {1}, {2}, {0, 1, 3}, {0, 2, 3}};
  for (const auto &list : lists)
    for (uint32_t creation = 0; creation < 3; ++creation) keys.insert(GroupRegistry::key(list, creation));
  assert_int_equal(keys.size(), lists.size() * 3);
  // A contiguous list of a million ranks stays short.
  std::vector<int> big(1 << 20);
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<int>(i);
  assert_int_equal(GroupRegistry::key(big, 0).size(), 12);
}

// The case that a 19-bit hash got wrong: {0,1} made 1,027 times and {0,2} 160 times. Every live
// pair of groups gets distinct slots, however many were made before.
void test_churn_never_collides_with_live_groups(void **) {
  GroupRegistry registry(64);  // few slots: reuse happens all the time
  const GroupClaim kept02 = [&] {
    GroupClaim last{};
    for (uint32_t n = 0; n < 160; ++n) {
      last = claim(registry, {0, 2}, n);
      assert_int_equal(claim(registry, {0, 2}, n).slot, last.slot);
      if (n + 1 < 160) {
        registry.release(last.slot);
        registry.release(last.slot);
      }
    }
    return last;
  }();
  for (uint32_t n = 0; n < 1027; ++n) {
    const GroupClaim made = claim(registry, {0, 1}, n);
    assert_int_equal(claim(registry, {0, 1}, n).slot, made.slot);
    assert_int_not_equal(made.slot, kept02.slot);
    if (n + 1 < 1027) {
      registry.release(made.slot);
      registry.release(made.slot);
    }
  }
  assert_int_equal(registry.live(), 2);
}

void test_slot_freed_only_when_every_member_released(void **) {
  GroupRegistry registry(2);
  const GroupClaim a = claim(registry, {0, 1}, 0);
  claim(registry, {0, 1}, 0);
  const GroupClaim b = claim(registry, {0, 2}, 0);
  assert_int_not_equal(a.slot, b.slot);
  assert_true(registry.release(a.slot));  // one of two members
  // Both slots live: no third group.
  assert_false(registry.claim(GroupRegistry::key({1, 2}, 0), 2).has_value());
  assert_true(registry.release(a.slot));  // the second member
  const GroupClaim c = claim(registry, {1, 2}, 0);
  assert_int_equal(c.slot, a.slot);
  assert_true(c.serial != a.serial);  // serials are never reused
  assert_false(registry.release(99));  // not live: nothing changes
}

void test_free_slots_reused_oldest_first(void **) {
  GroupRegistry registry(4);
  std::vector<GroupClaim> made;
  for (uint32_t n = 0; n < 4; ++n) made.push_back(claim(registry, {5}, n));
  registry.release(made[2].slot);
  registry.release(made[0].slot);
  assert_int_equal(claim(registry, {5}, 4).slot, made[2].slot);
  assert_int_equal(claim(registry, {5}, 5).slot, made[0].slot);
}

void test_members_that_disagree_on_the_size_get_nothing(void **) {
  GroupRegistry registry;
  const std::string key = GroupRegistry::key({0, 1}, 0);
  assert_true(registry.claim(key, 2).has_value());
  assert_false(registry.claim(key, 3).has_value());
  assert_false(registry.claim(key, 0).has_value());
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_members_get_the_same_identity),
      cmocka_unit_test(test_keys_are_exact),
      cmocka_unit_test(test_churn_never_collides_with_live_groups),
      cmocka_unit_test(test_slot_freed_only_when_every_member_released),
      cmocka_unit_test(test_free_slots_reused_oldest_first),
      cmocka_unit_test(test_members_that_disagree_on_the_size_get_nothing),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
