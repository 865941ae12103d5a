// What xffl-run refuses: bad options (exit 2, one line, nothing started) and a program that cannot be
// executed (exit 127 like a shell).
#include <fcntl.h>
#include <string>
#include <unistd.h>

#include "run_harness.h"
#include "cmocka_cpp.h"  // last

using namespace run_test;

namespace {

void check_cannot_execute(const std::string& program, const std::string& reason) {
  Outcome outcome = run_launcher({"-n", "4", "--", program, "arg"});
  assert_int_equal(outcome.exit_code, 127);
  std::string expected = "xffl-run: cannot execute '" + program + "': " + reason + "\n";
  assert_string_equal(outcome.err.c_str(), expected.c_str());
  assert_string_equal(outcome.out.c_str(), "");
}

void missing_program_exits_127(void**) {
  check_cannot_execute("/nonexistent/xffl-run-test-program", "No such file or directory");
  check_cannot_execute("xffl-run-test-no-such-program-on-path", "No such file or directory");
}

void program_without_execute_permission_exits_127(void**) {
  // Even root is refused a file with no execute bit at all.
  TempDir dir;
  std::string program = dir.path() + "/not-executable";
  int fd = ::open(program.c_str(), O_WRONLY | O_CREAT, 0644);
  assert_true(fd >= 0);
  assert_int_equal(::write(fd, "#!/bin/sh\necho ran\n", 19), 19);
  ::close(fd);
  check_cannot_execute(program, "Permission denied");
  check_cannot_execute(dir.path(), "Permission denied");  // a directory
}

struct BadCommandLine {
  std::vector<std::string> args;  // a probe that records its pid is appended after "--" if run_probe
  bool run_probe;
  const char* message;
};

void invalid_options_exit_2_with_one_line(void**) {
  const BadCommandLine cases[] = {
      {{}, false, "missing -n N (the number of processes)"},
      {{}, true, "missing -n N (the number of processes)"},
      {{"-n", "4"}, false, "missing the program to run (xffl-run -n N [options] -- PROG ARGS...)"},
      {{"-n"}, false, "-n needs a value"},
      {{"-n", "0"}, true, "-n must be at least 1, got 0"},
      {{"-n", "abc"}, true, "-n expects a whole number, got 'abc'"},
      {{"-n", "-3"}, true, "-n expects a whole number, got '-3'"},
      {{"-n", "99999999999"}, true, "-n value '99999999999' is too large"},
      {{"-n", "4", "--nodes", "3"}, true, "--nodes 3 does not divide -n 4"},
      {{"-n", "4", "--nodes", "0"}, true, "--nodes must be at least 1, got 0"},
      {{"-n", "4", "--nodes", "8"}, true, "--nodes 8 does not divide -n 4"},
      {{"-n", "8", "--federated", "3"}, true, "--federated 3 does not divide -n 8"},
      {{"-n", "8", "--federated", "3,4"}, true, "--federated 3,4 sums to 7, not -n 8"},
      {{"-n", "8", "--federated", "4,0,4"}, true, "--federated must be at least 1, got 0"},
      {{"-n", "8", "--federated", "4,,4"}, true, "--federated expects F or F1,F2,.. with positive sizes, got '4,,4'"},
      {{"-n", "8", "--federated", "0"}, true, "--federated must be at least 1, got 0"},
      {{"-n", "4", "--hsdp", "0"}, true, "--hsdp must be at least 1, got 0"},
      {{"-n", "2", "--facility", "0", "--federated", "2,2"}, true,
       "--facility 0 needs --federation ENDPOINT (xffl://host:port or etcd://h1:2379,...)"},
      {{"-n", "2", "--federation", "xffl://h:1", "--federated", "2,2"}, true,
       "--federation xffl://h:1 needs --facility I (this job's index in --federated)"},
      {{"-n", "2", "--facility", "0", "--federation", "xffl://h:1"}, true,
       "--facility 0 needs --federated F1,F2,.. listing every facility's size in processes"},
      {{"-n", "2", "--facility", "2", "--federation", "xffl://h:1", "--federated", "2,2"}, true,
       "--facility 2 outside [0, 2): --federated 2,2 lists 2 facilities"},
      {{"-n", "3", "--facility", "1", "--federation", "xffl://h:1", "--federated", "2,2"}, true,
       "-n 3 is not facility 1's size 2 in --federated 2,2 (each job is one facility)"},
      {{"-n", "2", "--facility", "one"}, true, "--facility expects a whole number, got 'one'"},
      {{"-n", "2", "--federation="}, true, "--federation must not be empty"},
      {{"-n", "4", "--backend", "mpi"}, true, "--backend expects none, ucx or nccl, got 'mpi'"},
      {{"-n", "4", "--streams", "0"}, true, "--streams must be at least 1, got 0"},
      {{"-n", "4", "--timeout", "0"}, true, "--timeout must be positive, got 0"},
      {{"-n", "4", "--timeout", "soon"}, true, "--timeout expects a number of seconds, got 'soon'"},
      {{"-n", "4", "--grace", "-1"}, true, "--grace expects a number of seconds, got '-1'"},
      {{"-n", "4", "--max-time", "0"}, true, "--max-time must be positive, got 0"},
      {{"-n", "4", "--master-port", "70000"}, true, "--master-port must be in 1..65535, got 70000"},
      {{"-n", "4", "--master-addr="}, true, "--master-addr must not be empty"},
      {{"-n", "4", "--master-addr", "192.0.2.1"}, true,
       "cannot bind a port on --master-addr '192.0.2.1': Cannot assign requested address"},
      {{"-n", "4", "--bind", "socket"}, true, "--bind expects core or none, got 'socket'"},
      {{"-n", "4", "--bogus"}, true, "unknown option '--bogus' (see xffl-run --help)"},
      {{"--help-env=yaml"}, false, "--help-env expects text or markdown, got 'yaml'"},
  };
  for (const BadCommandLine& bad : cases) {
    TempDir dir;
    std::vector<std::string> args = bad.args;
    if (bad.run_probe) args.insert(args.end(), {"--", probe_path(), "pid=" + dir.path()});
    Outcome outcome = run_launcher(args);
    std::string expected = std::string("xffl-run: error: ") + bad.message + "\n";
    if (outcome.exit_code != 2 || outcome.err != expected || !outcome.out.empty())
      fail_msg("case '%s': exit %d, stderr '%s', expected exit 2 and '%s'", bad.message, outcome.exit_code,
               outcome.err.c_str(), expected.c_str());
    if (bad.run_probe && file_exists(dir.path() + "/0.pid")) fail_msg("case '%s' started a rank", bad.message);
  }
}

void help_is_printed(void**) {
  Outcome outcome = run_launcher({"--help"});
  assert_int_equal(outcome.exit_code, 0);
  assert_true(starts_with(outcome.out, "usage: xffl-run -n N"));
  assert_string_equal(outcome.err.c_str(), "");
}

void help_env_is_printed(void**) {
  // The registry of XFFL_* variables (src/bootstrap/env_registry.cpp): every row with type and default.
  Outcome outcome = run_launcher({"--help-env"});
  assert_int_equal(outcome.exit_code, 0);
  assert_true(starts_with(outcome.out, "Environment variables xffl reads"));
  assert_true(outcome.out.find("\n  XFFL_BACKEND  choice: none, ucx, nccl\n") != std::string::npos);
  assert_true(outcome.out.find("\n  XFFL_TIMEOUT  seconds: ") != std::string::npos);
  assert_string_equal(outcome.err.c_str(), "");
  outcome = run_launcher({"--help-env=markdown"});
  assert_int_equal(outcome.exit_code, 0);
  assert_true(starts_with(outcome.out, "| variable | type | values | default | what it does |\n"));
}

void program_may_follow_without_separator(void**) {
  // torchrun style: the first word that is no option starts the command; its own options are its own.
  Outcome outcome = run_launcher({"-n", "1", probe_path(), "print=-n", "print=--bogus"});
  assert_int_equal(outcome.exit_code, 0);
  assert_string_equal(outcome.out.c_str(), "[0] -n\n[0] --bogus\n");
  outcome = run_launcher({"-n2", "--nodes=2", "--", probe_path(), "print=ok"});
  assert_int_equal(outcome.exit_code, 0);
  assert_string_equal(sorted_lines(outcome.out).c_str(), "[0] ok|[1] ok|");
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(missing_program_exits_127),
      cmocka_unit_test(program_without_execute_permission_exits_127),
      cmocka_unit_test(invalid_options_exit_2_with_one_line),
      cmocka_unit_test(help_is_printed),
      cmocka_unit_test(help_env_is_printed),
      cmocka_unit_test(program_may_follow_without_separator),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
