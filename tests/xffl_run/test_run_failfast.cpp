// One rank failing ends the job: the others get SIGTERM, then SIGKILL after the grace period; the exit
// code and one stderr line say which rank failed first. No process outlives xffl-run.
#include <algorithm>
#include <string>

#include "run_harness.h"
#include "cmocka_cpp.h"  // last

using namespace run_test;

namespace {

std::string last_line(const std::string& text) {
  std::vector<std::string> lines = split_lines(text);
  return lines.empty() ? "" : lines.back();
}

void assert_all_gone(const std::vector<long>& pids, const char* what) {
  for (std::size_t rank = 0; rank < pids.size(); ++rank)
    if (!process_gone(static_cast<pid_t>(pids[rank])))
      fail_msg("%s of rank %zu (pid %ld) is still there after xffl-run exited", what, rank, pids[rank]);
}

void failing_rank_ends_the_others(void**) {
  // Rank 2 fails once everyone is up; the rest would sleep for a minute.
  TempDir dir;
  Outcome outcome = run_launcher({"-n", "4", "--", probe_path(), "pid=" + dir.path(), "await=" + dir.path() + ":4",
                                  "@2:exit=7", "sleep=60"});
  assert_int_equal(outcome.exit_code, 7);
  assert_string_equal(outcome.err.c_str(), "xffl-run: rank 2 exited with code 7 (first failure); terminated ranks 0,1,3\n");
  assert_all_gone(read_numbers(dir.path(), ".pid", 4), "rank");
}

void rank_killed_by_a_signal(void**) {
  TempDir dir;
  Outcome outcome = run_launcher({"-n", "4", "--", probe_path(), "pid=" + dir.path(), "await=" + dir.path() + ":4",
                                  "@1:raise=9", "sleep=60"});
  assert_int_equal(outcome.exit_code, 128 + 9);
  assert_string_equal(last_line(outcome.err).c_str(),
                      "xffl-run: rank 1 killed by signal 9 (first failure); terminated ranks 0,2,3");
  assert_all_gone(read_numbers(dir.path(), ".pid", 4), "rank");
}

void rank_ignoring_sigterm_gets_sigkill(void**) {
  TempDir dir;
  Outcome outcome = run_launcher({"-n", "3", "--grace", "0.3", "--", probe_path(), "@0:ignore=15", "pid=" + dir.path(),
                                  "await=" + dir.path() + ":3", "@1:exit=3", "sleep=60"});
  assert_int_equal(outcome.exit_code, 3);  // the first failure's code, not the killed rank's
  std::string line = last_line(outcome.err);
  const std::string head = "xffl-run: rank 1 exited with code 3 (first failure); terminated ranks 0,2; SIGKILL to ranks ";
  const std::string tail = " after the 0.3 s grace period";
  if (!starts_with(line, head) || line.size() < head.size() + tail.size() ||
      line.compare(line.size() - tail.size(), tail.size(), tail) != 0)
    fail_msg("unexpected final line: '%s'", line.c_str());
  // Rank 0 ignored SIGTERM, so it must be among the killed; rank 2 may have died of SIGTERM first.
  std::string killed = "," + line.substr(head.size(), line.size() - head.size() - tail.size()) + ",";
  if (killed.find(",0,") == std::string::npos || killed.find(",1,") != std::string::npos)
    fail_msg("wrong SIGKILL list in: '%s'", line.c_str());
  assert_all_gone(read_numbers(dir.path(), ".pid", 3), "rank");
}

void all_ranks_succeeding_exit_zero(void**) {
  TempDir dir;
  // Rank 0 finishes at once; that is no failure, the others carry on to the end.
  Outcome outcome = run_launcher({"-n", "4", "--", probe_path(), "@0:exit=0", "sleep=0.2", "touch=" + dir.path()});
  assert_int_equal(outcome.exit_code, 0);
  assert_string_equal(outcome.err.c_str(), "");
  for (int rank = 1; rank < 4; ++rank)
    if (!file_exists(dir.path() + "/" + std::to_string(rank) + ".done")) fail_msg("rank %d did not run to its end", rank);
}

void rank_closing_its_pipes_is_still_waited_for(void**) {
  TempDir dir;
  Outcome outcome = run_launcher({"-n", "2", "--", probe_path(), "print=before", "close", "sleep=0.3", "touch=" + dir.path()});
  assert_int_equal(outcome.exit_code, 0);
  for (int rank = 0; rank < 2; ++rank)
    if (!file_exists(dir.path() + "/" + std::to_string(rank) + ".done"))
      fail_msg("xffl-run returned before rank %d, which had closed its output, finished", rank);
  assert_int_equal(std::count(outcome.out.begin(), outcome.out.end(), '\n'), 2);
}

void processes_left_behind_by_ranks_are_ended(void**) {
  // Each rank starts a sleeper in its process group and exits 0 without waiting for it.
  TempDir dir;
  Outcome outcome = run_launcher({"-n", "2", "--grace", "2", "--", probe_path(), "spawn=" + dir.path()});
  assert_int_equal(outcome.exit_code, 0);
  assert_string_equal(outcome.err.c_str(),
                      "xffl-run: ranks 0,1 left processes running in their process groups; terminating them\n");
  assert_all_gone(read_numbers(dir.path(), ".child", 2), "the process started by");
}

void failure_while_descendants_run(void**) {
  // The failing rank's and the others' descendants all go with them.
  TempDir dir;
  Outcome outcome = run_launcher({"-n", "3", "--", probe_path(), "spawn=" + dir.path(), "pid=" + dir.path(),
                                  "await=" + dir.path() + ":3", "@0:exit=4", "sleep=60"});
  assert_int_equal(outcome.exit_code, 4);
  assert_string_equal(last_line(outcome.err).c_str(),
                      "xffl-run: rank 0 exited with code 4 (first failure); terminated ranks 1,2");
  assert_all_gone(read_numbers(dir.path(), ".pid", 3), "rank");
  assert_all_gone(read_numbers(dir.path(), ".child", 3), "the process started by");
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(failing_rank_ends_the_others),
      cmocka_unit_test(rank_killed_by_a_signal),
      cmocka_unit_test(rank_ignoring_sigterm_gets_sigkill),
      cmocka_unit_test(all_ranks_succeeding_exit_zero),
      cmocka_unit_test(rank_closing_its_pipes_is_still_waited_for),
      cmocka_unit_test(processes_left_behind_by_ranks_are_ended),
      cmocka_unit_test(failure_while_descendants_run),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
