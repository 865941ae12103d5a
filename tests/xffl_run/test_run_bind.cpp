// xffl-run --bind core: rank r runs on CPU r mod K of the K CPUs xffl-run may use (its own affinity,
// inherited); without it (or with --bind none) every rank keeps that whole set.
#include <sched.h>

#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "run_harness.h"
#include "cmocka_cpp.h"  // last

using namespace run_test;

namespace {

std::vector<int> my_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  assert_int_equal(::sched_getaffinity(0, sizeof set, &set), 0);
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  return cpus;
}

// Rank -> the CPUs it may run on, from every "[r] cpus C1 C2 ..." line; fails on any other line.
std::map<int, std::vector<int>> cpus_by_rank(const Outcome& outcome) {
  std::map<int, std::vector<int>> by_rank;
  for (const std::string& line : split_lines(outcome.out)) {
    int rank = -1;
    int consumed = 0;
    if (std::sscanf(line.c_str(), "[%d] cpus%n", &rank, &consumed) != 1 || consumed == 0)
      fail_msg("unexpected stdout line: '%s'", line.c_str());
    std::istringstream rest(line.substr(static_cast<std::size_t>(consumed)));
    std::vector<int> cpus;
    for (int cpu; rest >> cpu;) cpus.push_back(cpu);
    by_rank[rank] = cpus;
  }
  return by_rank;
}

std::map<int, std::vector<int>> launch(int ranks, const std::vector<std::string>& options) {
  std::vector<std::string> args{"-n", std::to_string(ranks)};
  args.insert(args.end(), options.begin(), options.end());
  args.insert(args.end(), {"--", probe_path(), "cpus"});
  Outcome outcome = run_launcher(args);
  if (outcome.exit_code != 0) fail_msg("xffl-run exited %d: %s", outcome.exit_code, outcome.err.c_str());
  assert_string_equal(outcome.err.c_str(), "");
  std::map<int, std::vector<int>> by_rank = cpus_by_rank(outcome);
  assert_int_equal(by_rank.size(), ranks);
  return by_rank;
}

std::string text(const std::vector<int>& cpus) {
  std::string joined;
  for (int cpu : cpus) joined += (joined.empty() ? "" : " ") + std::to_string(cpu);
  return joined;
}

// More ranks than CPUs (and fewer, on a machine with many): each on one CPU, round robin over ours.
void bind_core_puts_rank_r_on_cpu_r_mod_k(void**) {
  const std::vector<int> cpus = my_cpus();
  for (int ranks : {1, 2, static_cast<int>(cpus.size()) * 2 + 1}) {
    const auto by_rank = launch(ranks, {"--bind", "core"});
    for (const auto& [rank, got] : by_rank) {
      const std::vector<int> expected{cpus[static_cast<std::size_t>(rank) % cpus.size()]};
      if (got != expected)
        fail_msg("%d ranks, --bind core: rank %d may run on {%s}, expected {%s}", ranks, rank, text(got).c_str(),
                 text(expected).c_str());
    }
  }
}

// Unpinned by default and with --bind none: every rank may run on every CPU xffl-run may.
void without_bind_every_rank_keeps_our_cpus(void**) {
  const std::vector<int> cpus = my_cpus();
  for (const std::vector<std::string>& options : {std::vector<std::string>{}, std::vector<std::string>{"--bind", "none"}})
    for (const auto& [rank, got] : launch(3, options))
      if (got != cpus)
        fail_msg("rank %d may run on {%s}, expected xffl-run's {%s}", rank, text(got).c_str(), text(cpus).c_str());
}

// The CPUs counted are xffl-run's own, as a batch system or taskset left them: restricted to the
// last one of ours, every rank lands there.
void bind_core_stays_within_an_inherited_affinity(void**) {
  const std::vector<int> cpus = my_cpus();
  cpu_set_t saved, one;
  CPU_ZERO(&saved);
  for (int cpu : cpus) CPU_SET(cpu, &saved);
  CPU_ZERO(&one);
  CPU_SET(cpus.back(), &one);
  assert_int_equal(::sched_setaffinity(0, sizeof one, &one), 0);  // inherited by xffl-run
  const auto by_rank = launch(3, {"--bind", "core"});
  assert_int_equal(::sched_setaffinity(0, sizeof saved, &saved), 0);
  for (const auto& [rank, got] : by_rank)
    if (got != std::vector<int>{cpus.back()})
      fail_msg("rank %d may run on {%s}, expected {%d}", rank, text(got).c_str(), cpus.back());
}

}  // namespace

int main() {
  const CMUnitTest tests[] = {
      cmocka_unit_test(bind_core_puts_rank_r_on_cpu_r_mod_k),
      cmocka_unit_test(without_bind_every_rank_keeps_our_cpus),
      cmocka_unit_test(bind_core_stays_within_an_inherited_affinity),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
