#include "rank_process.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include "errors.h"

extern char** environ;

namespace xffl_run {
namespace {

std::vector<char*> as_argv(const std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (const std::string& s : strings) pointers.push_back(const_cast<char*>(s.c_str()));
  pointers.push_back(nullptr);
  return pointers;
}

// What the child reports on the status pipe when it cannot become the rank (close-on-exec: silence
// means the exec succeeded).
struct ChildFailure {
  int binding = 0;  // 1: sched_setaffinity refused the CPU; 0: dup2 or exec failed
  int error = 0;    // errno
};

[[noreturn]] void report_and_exit(int status_fd, int binding) {
  ChildFailure failure{binding, errno};
  ssize_t ignored = ::write(status_fd, &failure, sizeof failure);
  (void)ignored;
  ::_exit(kExitCannotExecute);
}

// Between fork and exec only async-signal-safe calls: everything was prepared by the parent.
[[noreturn]] void become_rank(char** argv, char** envp, int null_fd, int out_fd, int err_fd, int status_fd,
                              const SignalWatch& signals, const cpu_set_t* cpus) {
  ::setpgid(0, 0);
  signals.restore_in_child();
  if (cpus && ::sched_setaffinity(0, sizeof(cpu_set_t), cpus) != 0) report_and_exit(status_fd, 1);
  if (::dup2(null_fd, STDIN_FILENO) < 0 || ::dup2(out_fd, STDOUT_FILENO) < 0 || ::dup2(err_fd, STDERR_FILENO) < 0)
    report_and_exit(status_fd, 0);
  environ = envp;  // execvp searches PATH and passes environ on
  ::execvp(argv[0], argv);
  report_and_exit(status_fd, 0);
}

}  // namespace

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) != 0) throw SystemError("sched_getaffinity", errno);
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  return cpus;
}

StartedRank start_rank(const std::vector<std::string>& command, const std::vector<std::string>& environment,
                       const SignalWatch& signals, std::optional<int> cpu) {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  if (cpu) CPU_SET(*cpu, &cpus);
  std::vector<char*> argv = as_argv(command);
  std::vector<char*> envp = as_argv(environment);
  UniqueFd null_fd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  if (!null_fd) throw SystemError("open /dev/null", errno);
  Pipe out = make_pipe();
  Pipe err = make_pipe();
  Pipe status = make_pipe();

  pid_t pid;
  {
    SignalWatch::BlockedScope blocked;
    pid = ::fork();
    if (pid == 0)
      become_rank(argv.data(), envp.data(), null_fd.get(), out.write_end.get(), err.write_end.get(),
                  status.write_end.get(), signals, cpu ? &cpus : nullptr);
  }
  if (pid < 0) throw SystemError("fork", errno);
  ::setpgid(pid, pid);  // also here, so the group exists before we might signal it; EACCES after exec is fine
  out.write_end.reset();
  err.write_end.reset();
  status.write_end.reset();

  ChildFailure failure;
  ssize_t got;
  do {
    got = ::read(status.read_end.get(), &failure, sizeof failure);
  } while (got < 0 && errno == EINTR);
  if (got > 0) {
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    if (failure.binding)
      throw ExecError("cannot bind '" + command[0] + "' to CPU " + std::to_string(*cpu) + ": " +
                      std::strerror(failure.error));
    throw ExecError("cannot execute '" + command[0] + "': " + std::strerror(failure.error));
  }

  set_nonblocking(out.read_end.get());
  set_nonblocking(err.read_end.get());
  return StartedRank{pid, std::move(out.read_end), std::move(err.read_end)};
}

}  // namespace xffl_run
