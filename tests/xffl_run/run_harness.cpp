#include "run_harness.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <fstream>
#include <iterator>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cmocka_cpp.h"  // last

extern char** environ;

namespace run_test {

const char* launcher_path() { return XFFL_RUN_EXE; }
const char* probe_path() { return XFFL_RUN_PROBE; }

Launch::Launch(const std::vector<std::string>& args, const std::vector<std::string>& extra_env, bool own_group) {
  std::vector<std::string> argv_strings{launcher_path()};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  for (const std::string& a : argv_strings) command_ += (command_.empty() ? "" : " ") + a;

  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e) env_strings.emplace_back(*e);
  env_strings.insert(env_strings.end(), extra_env.begin(), extra_env.end());
  std::vector<char*> argv, envp;
  for (std::string& s : argv_strings) argv.push_back(&s[0]);
  argv.push_back(nullptr);
  for (std::string& s : env_strings) envp.push_back(&s[0]);
  envp.push_back(nullptr);

  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) fail_msg("pipe: %s", std::strerror(errno));
  pid_ = ::fork();
  if (pid_ < 0) fail_msg("fork: %s", std::strerror(errno));
  if (pid_ == 0) {
    if (own_group) ::setpgid(0, 0);
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(126);
  }
  if (own_group) ::setpgid(pid_, pid_);  // before any signal to the group can be sent
  ::close(out[1]);
  ::close(err[1]);
  out_fd_ = out[0];
  err_fd_ = err[0];
}

Launch::~Launch() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  if (out_fd_ >= 0) ::close(out_fd_);
  if (err_fd_ >= 0) ::close(err_fd_);
}

void Launch::send(int signo) const { ::kill(pid_, signo); }

void Launch::send_to_group(int signo) const { ::kill(-pid_, signo); }

Outcome Launch::finish(double seconds) {
  using Clock = std::chrono::steady_clock;
  Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(static_cast<long>(seconds * 1000));
  Outcome outcome;
  char buffer[65536];
  while (out_fd_ >= 0 || err_fd_ >= 0) {
    long left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) fail_msg("xffl-run still writing after %.0f s: %s", seconds, command_.c_str());
    pollfd fds[2] = {{out_fd_, POLLIN, 0}, {err_fd_, POLLIN, 0}};
    ::poll(fds, 2, static_cast<int>(left));
    for (int i = 0; i < 2; ++i) {
      int& fd = i == 0 ? out_fd_ : err_fd_;
      if (fd < 0 || fds[i].revents == 0) continue;
      ssize_t n = ::read(fd, buffer, sizeof buffer);
      if (n > 0) {
        (i == 0 ? outcome.out : outcome.err).append(buffer, static_cast<std::size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        ::close(fd);
        fd = -1;
      }
    }
  }
  int status = 0;
  while (true) {
    pid_t done = ::waitpid(pid_, &status, WNOHANG);
    if (done == pid_) break;
    if (Clock::now() >= deadline) fail_msg("xffl-run did not exit within %.0f s: %s", seconds, command_.c_str());
    ::usleep(10000);  // its output is closed, so it is about to exit
  }
  pid_ = -1;
  if (WIFEXITED(status)) outcome.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) outcome.death_signal = WTERMSIG(status);
  return outcome;
}

Outcome run_launcher(const std::vector<std::string>& args, const std::vector<std::string>& extra_env) {
  Launch launch(args, extra_env);
  return launch.finish();
}

TempDir::TempDir() {
  char pattern[] = "/tmp/xffl-run-test-XXXXXX";
  if (!::mkdtemp(pattern)) fail_msg("mkdtemp: %s", std::strerror(errno));
  path_ = pattern;
}

TempDir::~TempDir() {
  if (DIR* d = ::opendir(path_.c_str())) {
    while (dirent* entry = ::readdir(d)) {
      std::string name = entry->d_name;
      if (name != "." && name != "..") ::unlink((path_ + "/" + name).c_str());
    }
    ::closedir(d);
  }
  ::rmdir(path_.c_str());
}

static int count_suffix(const std::string& dir, const std::string& suffix) {
  int count = 0;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* entry = ::readdir(d)) {
      std::string name = entry->d_name;
      if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
        ++count;
    }
    ::closedir(d);
  }
  return count;
}

void await_files(const std::string& dir, const std::string& suffix, int count, double seconds) {
  using Clock = std::chrono::steady_clock;
  Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(static_cast<long>(seconds * 1000));
  while (count_suffix(dir, suffix) < count) {
    if (Clock::now() >= deadline)
      fail_msg("waited %.0f s for %d '%s' files in %s, found %d", seconds, count, suffix.c_str(), dir.c_str(),
               count_suffix(dir, suffix));
    ::usleep(5000);
  }
}

std::vector<long> read_numbers(const std::string& dir, const std::string& suffix, int ranks) {
  std::vector<long> numbers;
  for (int rank = 0; rank < ranks; ++rank) {
    std::ifstream file(dir + "/" + std::to_string(rank) + suffix);
    long value = 0;
    if (!(file >> value)) fail_msg("rank %d wrote no %s file in %s", rank, suffix.c_str(), dir.c_str());
    numbers.push_back(value);
  }
  return numbers;
}

bool file_exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

std::string read_file(const std::string& path) {
  std::ifstream file(path);
  return std::string(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
}

bool process_gone(pid_t pid) { return ::kill(pid, 0) != 0 && errno == ESRCH; }

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::string::size_type start = 0;
  while (start < text.size()) {
    std::string::size_type end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

std::string sorted_lines(const std::string& text) {
  std::vector<std::string> lines = split_lines(text);
  std::sort(lines.begin(), lines.end());
  std::string joined;
  for (const std::string& line : lines) joined += line + "|";
  return joined;
}

bool starts_with(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }

}  // namespace run_test
