// The three ways a launch can end before any rank runs, each with the exit code the shell should see.
#ifndef XFFL_RUN_ERRORS_H
#define XFFL_RUN_ERRORS_H

#include <stdexcept>
#include <string>

namespace xffl_run {

// A bad command line: printed as "xffl-run: error: <message>", exit 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The program could not be started: printed as "xffl-run: <message>", exit 127 like a shell.
class ExecError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The operating system refused something we need (fork, pipe, ...): "xffl-run: <message>", exit 1.
class SystemError : public std::runtime_error {
 public:
  SystemError(const std::string& what_failed, int err);
};

constexpr int kExitUsage = 2;
constexpr int kExitSystem = 1;
constexpr int kExitCannotExecute = 127;
constexpr int kExitMaxTime = 124;

}  // namespace xffl_run

#endif
