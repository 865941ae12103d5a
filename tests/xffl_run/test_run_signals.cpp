// SIGINT, SIGTERM and SIGHUP sent to xffl-run reach every rank once; ranks that ignore them are killed
// after the grace period (or at once on a second signal); xffl-run exits 128+signal.
#include <csignal>
#include <string>

#include "run_harness.h"
#include "cmocka_cpp.h"  // last

using namespace run_test;

namespace {

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

// Each rank exits on the signal after recording it; xffl-run passes it on and reports it.
void check_forwarded(int signo, const char* name) {
  TempDir dir;
  Launch launch({"-n", "3", "--", probe_path(), "trap=" + dir.path(), "pid=" + dir.path(), "sleep=60"});
  await_files(dir.path(), ".pid", 3);
  launch.send(signo);
  Outcome outcome = launch.finish();
  assert_int_equal(outcome.exit_code, 128 + signo);
  std::string expected = "xffl-run: received signal " + std::to_string(signo) + " (" + name + "); forwarded to ranks 0,1,2";
  assert_string_equal(last_line(outcome.err).c_str(), expected.c_str());
  for (int rank = 0; rank < 3; ++rank) {
    std::string got = read_file(dir.path() + "/" + std::to_string(rank) + ".signal");
    if (got != std::to_string(signo)) fail_msg("rank %d recorded signal '%s', expected %d", rank, got.c_str(), signo);
  }
  assert_ranks_gone(dir.path(), 3);
}

void sigterm_is_forwarded(void**) { check_forwarded(SIGTERM, "Terminated"); }
void sigint_is_forwarded(void**) { check_forwarded(SIGINT, "Interrupt"); }
void sighup_is_forwarded(void**) { check_forwarded(SIGHUP, "Hangup"); }

void ranks_ignoring_the_signal_are_killed_after_grace(void**) {
  TempDir dir;
  Launch launch({"-n", "2", "--grace", "0.3", "--", probe_path(), "ignore=15", "pid=" + dir.path(), "sleep=60"});
  await_files(dir.path(), ".pid", 2);
  launch.send(SIGTERM);
  Outcome outcome = launch.finish();
  assert_int_equal(outcome.exit_code, 128 + SIGTERM);
  assert_string_equal(last_line(outcome.err).c_str(),
                      "xffl-run: received signal 15 (Terminated); forwarded to ranks 0,1; SIGKILL to ranks 0,1 "
                      "after the 0.3 s grace period");
  assert_ranks_gone(dir.path(), 2);
}

void second_signal_kills_at_once(void**) {
  // The ranks note the signal and carry on; the grace period is far longer than the test's bound.
  TempDir dir;
  Launch launch({"-n", "2", "--grace", "600", "--", probe_path(), "note=" + dir.path(), "pid=" + dir.path(), "sleep=60"});
  await_files(dir.path(), ".pid", 2);
  launch.send(SIGINT);
  await_files(dir.path(), ".signal", 2);  // xffl-run has forwarded the first one
  launch.send(SIGINT);
  Outcome outcome = launch.finish(30);
  assert_int_equal(outcome.exit_code, 128 + SIGINT);
  assert_string_equal(last_line(outcome.err).c_str(),
                      "xffl-run: received signal 2 (Interrupt); forwarded to ranks 0,1; SIGKILL to ranks 0,1 after a "
                      "second signal");
  assert_ranks_gone(dir.path(), 2);
}

void terminal_interrupt_reaches_each_rank_once(void**) {
  // A terminal sends Ctrl-C to the whole foreground process group. The ranks sit in groups of their
  // own, so they hear it only from xffl-run: exactly once.
  TempDir dir;
  Launch launch({"-n", "3", "--grace", "600", "--", probe_path(), "note=" + dir.path(), "pid=" + dir.path(), "sleep=60"},
                {}, /*own_group=*/true);
  await_files(dir.path(), ".pid", 3);
  launch.send_to_group(SIGINT);
  await_files(dir.path(), ".signal", 3);
  launch.send(SIGTERM);  // a second signal ends it without waiting for the grace period
  Outcome outcome = launch.finish(30);
  assert_int_equal(outcome.exit_code, 128 + SIGINT);
  for (int rank = 0; rank < 3; ++rank) {
    std::string got = read_file(dir.path() + "/" + std::to_string(rank) + ".signal");
    if (got != "2\n") fail_msg("rank %d saw signals '%s', expected SIGINT once", rank, got.c_str());
  }
  assert_ranks_gone(dir.path(), 3);
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(sigterm_is_forwarded),
      cmocka_unit_test(sigint_is_forwarded),
      cmocka_unit_test(sighup_is_forwarded),
      cmocka_unit_test(ranks_ignoring_the_signal_are_killed_after_grace),
      cmocka_unit_test(second_signal_kills_at_once),
      cmocka_unit_test(terminal_interrupt_reaches_each_rank_once),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
