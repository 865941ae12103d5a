// common/lazy_library.h, the loader behind UCX, PMIx and libcurl: sonames tried in order, the loader's
// words on failure, symbols resolved by name, and a failed load kept and thrown again to every caller.
#include "common/lazy_library.h"

#include <cstring>

// cmocka last: its fail() macro would clash with std::ios::fail and xffl::fail.
#include "bootstrap_test.h"

using namespace xffl;
using bootstrap_test::contains;
using bootstrap_test::expect_failure;
using bootstrap_test::outcome_of;

namespace {

constexpr const char *kMissing = "libxffl-test-no-such-library.so.9";
constexpr const char *kOtherMissing = "libxffl-test-nor-this-one.so.7";
constexpr const char *kLibc = "libc.so.6";  // loaded in every process: dlopen only counts a reference

void test_first_loadable_soname_is_opened(void **) {
  std::string reason;
  void *handle = open_library({kMissing, kLibc}, reason);
  assert_non_null(handle);
  std::string lookup;
  assert_non_null(find_symbol(handle, "strlen", lookup));
  assert_null(find_symbol(handle, "xffl_test_no_such_symbol", lookup));
  if (!contains(lookup, "xffl_test_no_such_symbol")) fail_msg("the loader's words '%s' lack the symbol", lookup.c_str());
}

void test_failure_names_every_soname_tried(void **) {
  std::string reason;
  assert_null(open_library({kMissing, kOtherMissing}, reason));
  if (!contains(reason, kMissing) || !contains(reason, kOtherMissing) || !contains(reason, "; "))
    fail_msg("reason '%s' does not name both sonames", reason.c_str());
  assert_null(open_library({kMissing}, reason));
  if (contains(reason, "; ")) fail_msg("reason '%s' for one soname has a separator", reason.c_str());
}

struct LibcTable {
  size_t (*strlen)(const char *);
  void (*xffl_test_no_such_symbol)();
};

void test_resolver_fills_the_table_and_reports_a_missing_symbol(void **) {
  std::string reason;
  void *handle = open_library({kLibc}, reason);
  assert_non_null(handle);
  const SymbolResolver resolve(handle, [](const char *name, const std::string &why) {
    throw Error(XFFL_EUNSUPPORTED, std::string("test library lacks ") + name + " (" + why + ")");
  });
  LibcTable table{};
  XFFL_RESOLVE_SYMBOL(resolve, table, strlen);
  assert_int_equal(table.strlen("four"), 4);
  expect_failure(outcome_of([&] { XFFL_RESOLVE_SYMBOL(resolve, table, xffl_test_no_such_symbol); }),
                 XFFL_EUNSUPPORTED, {"test library lacks xffl_test_no_such_symbol ("});
}

int opens = 0;

struct FailingTable {
  int value;
};

FailingTable open_failing() {
  ++opens;
  throw Error(XFFL_EUNSUPPORTED, "the test library could not be loaded (attempt " + std::to_string(opens) + ")");
}

struct GoodTable {
  int value;
};

GoodTable open_good() {
  ++opens;
  return GoodTable{42};
}

void test_failure_is_kept_and_thrown_again(void **) {
  opens = 0;
  for (int call = 0; call < 3; ++call)
    expect_failure(outcome_of([] { (void)load_once<FailingTable, open_failing>(); }), XFFL_EUNSUPPORTED,
                   {"the test library could not be loaded (attempt 1)"});
  assert_int_equal(opens, 1);
}

void test_success_is_opened_once(void **) {
  opens = 0;
  const GoodTable &first = load_once<GoodTable, open_good>();
  const GoodTable &second = load_once<GoodTable, open_good>();
  assert_int_equal(first.value, 42);
  assert_ptr_equal(&first, &second);
  assert_int_equal(opens, 1);
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_first_loadable_soname_is_opened),
      cmocka_unit_test(test_failure_names_every_soname_tried),
      cmocka_unit_test(test_resolver_fills_the_table_and_reports_a_missing_symbol),
      cmocka_unit_test(test_failure_is_kept_and_thrown_again),
      cmocka_unit_test(test_success_is_opened_once),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
