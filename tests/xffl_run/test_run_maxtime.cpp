// --max-time ends the whole job after that long: exit 124 and a line naming the ranks still running.
#include <string>

#include "run_harness.h"
#include "cmocka_cpp.h"  // last

using namespace run_test;

namespace {

// The limits below leave the ranks ample time to write their pid files (and to ignore SIGTERM)
// before the launcher ends them.

std::string last_line(const std::string& text) {
  std::vector<std::string> lines = split_lines(text);
  return lines.empty() ? "" : lines.back();
}

void assert_ranks_gone(const std::string& dir, int world) {
  std::vector<long> pids = read_numbers(dir, ".pid", world);
  for (int rank = 0; rank < world; ++rank)
    if (!process_gone(static_cast<pid_t>(pids[static_cast<std::size_t>(rank)])))
      fail_msg("rank %d (pid %ld) is still there after xffl-run exited", rank, pids[static_cast<std::size_t>(rank)]);
}

void max_time_ends_the_job(void**) {
  TempDir dir;
  Outcome outcome = run_launcher({"-n", "2", "--max-time", "1", "--", probe_path(), "pid=" + dir.path(), "sleep=60"});
  assert_int_equal(outcome.exit_code, 124);
  assert_string_equal(last_line(outcome.err).c_str(),
                      "xffl-run: --max-time 1 s expired; terminated ranks 0,1 (still running)");
  assert_ranks_gone(dir.path(), 2);
}

void max_time_names_only_running_ranks(void**) {
  // Rank 0 is done (and reaped, so its pid is gone) before the others even record theirs.
  TempDir dir;
  Outcome outcome = run_launcher({"-n", "3", "--max-time", "1.5", "--", probe_path(), "@0:pid=" + dir.path(),
                                  "@0:exit=0", "gone=" + dir.path() + ":0", "pid=" + dir.path(), "sleep=60"});
  assert_int_equal(outcome.exit_code, 124);
  assert_string_equal(last_line(outcome.err).c_str(),
                      "xffl-run: --max-time 1.5 s expired; terminated ranks 1,2 (still running)");
  assert_ranks_gone(dir.path(), 3);
}

void max_time_kills_ranks_that_ignore_sigterm(void**) {
  TempDir dir;
  Outcome outcome = run_launcher({"-n", "2", "--max-time", "1", "--grace", "0.2", "--", probe_path(), "ignore=15",
                                  "pid=" + dir.path(), "sleep=60"});
  assert_int_equal(outcome.exit_code, 124);
  assert_string_equal(last_line(outcome.err).c_str(),
                      "xffl-run: --max-time 1 s expired; terminated ranks 0,1 (still running); SIGKILL to ranks "
                      "0,1 after the 0.2 s grace period");
  assert_ranks_gone(dir.path(), 2);
}

void job_within_max_time_is_untouched(void**) {
  Outcome outcome = run_launcher({"-n", "2", "--max-time", "60", "--", probe_path(), "print=done"});
  assert_int_equal(outcome.exit_code, 0);
  assert_string_equal(sorted_lines(outcome.out).c_str(), "[0] done|[1] done|");
  assert_string_equal(outcome.err.c_str(), "");
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(max_time_ends_the_job),
      cmocka_unit_test(max_time_names_only_running_ranks),
      cmocka_unit_test(max_time_kills_ranks_that_ignore_sigterm),
      cmocka_unit_test(job_within_max_time_is_untouched),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
