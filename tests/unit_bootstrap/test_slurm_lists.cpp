// SLURM's compressed host lists and task counts, table-driven.
#include "bootstrap/slurm_lists.h"

// cmocka last: its fail() macro would clash with std::ios::fail and xffl::fail.
#include "bootstrap_test.h"

using namespace xffl;
using namespace xffl::bootstrap;
using bootstrap_test::contains;
using bootstrap_test::outcome_of;

namespace {

std::string joined(const std::vector<std::string> &hosts) {
  std::string out;
  for (const std::string &host : hosts) out += (out.empty() ? "" : " ") + host;
  return out;
}

void test_host_lists(void **) {
  struct Case {
    const char *text, *hosts, *first;
  } cases[] = {
      {"login1", "login1", "login1"},
      {"gpu[003-005,007],login1", "gpu003 gpu004 gpu005 gpu007 login1", "gpu003"},
      {"node[8-11]", "node8 node9 node10 node11", "node8"},
      {"node[08-11]", "node08 node09 node10 node11", "node08"},
      {"a,b[1-2],c", "a b1 b2 c", "a"},
      {"r[1-2]n[01-02]", "r1n01 r1n02 r2n01 r2n02", "r1n01"},
      {"rack[2]-gpu[5-6].site", "rack2-gpu5.site rack2-gpu6.site", "rack2-gpu5.site"},
      {"[1-2]x", "1x 2x", "1x"},
  };
  for (const Case &c : cases) {
    std::string hosts = joined(expand_slurm_hostlist(c.text, "SLURM_JOB_NODELIST"));
    if (hosts != c.hosts) fail_msg("%s expanded to '%s', expected '%s'", c.text, hosts.c_str(), c.hosts);
    std::string first = first_slurm_host(c.text, "SLURM_JOB_NODELIST");
    if (first != c.first) fail_msg("first host of %s is '%s', expected '%s'", c.text, first.c_str(), c.first);
  }
}

void test_host_list_errors(void **) {
  struct Case {
    const char *text, *phrase;
  } cases[] = {
      {"", "empty"},
      {"gpu[003-005", "never closed"},
      {"gpu]1", "no matching"},
      {"gpu[5-3]", "runs backwards"},
      {"gpu[a-b]", "not a number"},
      {"gpu[[1]]", "nested"},
      {"a,,b", "empty host name"},
      {"gpu[1-]", "not a number"},
  };
  for (const Case &c : cases) {
    bootstrap_test::Outcome outcome = outcome_of([&] { expand_slurm_hostlist(c.text, "SLURM_NODELIST"); });
    if (outcome.status != XFFL_EINVAL || !contains(outcome.message, "SLURM_NODELIST='") ||
        !contains(outcome.message, c.phrase))
      fail_msg("'%s': %s", c.text, outcome.message.c_str());
  }
  bootstrap_test::Outcome huge = outcome_of([&] { expand_slurm_hostlist("n[0-99999999]", "SLURM_NODELIST", 1000); });
  assert_true(huge.status == XFFL_EINVAL && contains(huge.message, "more than 1000 hosts"));
  // The first host of a huge range needs no expansion.
  assert_string_equal(first_slurm_host("n[0-99999999]", "SLURM_NODELIST").c_str(), "n0");
}

void test_tasks_per_node(void **) {
  assert_true(expand_slurm_tasks_per_node("4(x2),3", "V") == std::vector<int>({4, 4, 3}));
  assert_true(expand_slurm_tasks_per_node("2", "V") == std::vector<int>({2}));
  assert_true(expand_slurm_tasks_per_node("1,2(x1),3(x3)", "V") == std::vector<int>({1, 2, 3, 3, 3}));
  for (const char *bad : {"", "4(x)", "4(2)", "x(x2)", "4(x0)", "4,,3", "4(x2"}) {
    bootstrap_test::Outcome outcome = outcome_of([&] { expand_slurm_tasks_per_node(bad, "SLURM_TASKS_PER_NODE"); });
    if (outcome.status != XFFL_EINVAL || !contains(outcome.message, "SLURM_TASKS_PER_NODE='"))
      fail_msg("'%s' was accepted or badly reported: %s", bad, outcome.message.c_str());
  }
  bootstrap_test::Outcome huge = outcome_of([&] { expand_slurm_tasks_per_node("1(x999999999)", "V", 1000); });
  assert_true(huge.status == XFFL_EINVAL && contains(huge.message, "more than 1000 nodes"));
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_host_lists),
      cmocka_unit_test(test_host_list_errors),
      cmocka_unit_test(test_tasks_per_node),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
