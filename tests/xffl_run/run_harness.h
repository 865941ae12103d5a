// Drives the built xffl-run from the tests: start it, talk to it with signals, collect what it said.
#ifndef XFFL_RUN_HARNESS_H
#define XFFL_RUN_HARNESS_H

#include <string>
#include <sys/types.h>
#include <vector>

namespace run_test {

struct Outcome {
  int exit_code = -1;    // xffl-run's exit status; -1 if it died by a signal
  int death_signal = 0;  // the signal that killed xffl-run itself, 0 if it exited
  std::string out;
  std::string err;
};

// One running xffl-run, its stdout and stderr captured through pipes.
class Launch {
 public:
  // args are xffl-run's arguments (the probe's path is available as probe_path()).
  // own_group: xffl-run leads its own process group, as a shell's foreground job does.
  explicit Launch(const std::vector<std::string>& args, const std::vector<std::string>& extra_env = {},
                  bool own_group = false);
  ~Launch();  // SIGKILLs xffl-run if a failed test left it running
  Launch(const Launch&) = delete;
  Launch& operator=(const Launch&) = delete;

  pid_t pid() const { return pid_; }
  void send(int signo) const;
  // To xffl-run's whole process group, as a terminal's Ctrl-C does (needs own_group).
  void send_to_group(int signo) const;
  // Reads everything and waits for exit, bounded by `seconds`; fails the test naming the command if
  // xffl-run is still there by then.
  Outcome finish(double seconds = 30);

 private:
  pid_t pid_ = -1;
  int out_fd_ = -1;
  int err_fd_ = -1;
  std::string command_;
};

Outcome run_launcher(const std::vector<std::string>& args, const std::vector<std::string>& extra_env = {});

const char* launcher_path();
const char* probe_path();

// A fresh directory under /tmp, removed with its files at the end.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Waits (bounded by `seconds`) until `dir` holds `count` files ending in `suffix`; fails the test if not.
void await_files(const std::string& dir, const std::string& suffix, int count, double seconds = 20);
// Reads DIR/<rank><suffix> for each rank as an integer; fails the test if one is missing.
std::vector<long> read_numbers(const std::string& dir, const std::string& suffix, int ranks);
bool file_exists(const std::string& path);
std::string read_file(const std::string& path);
// True if no process with this pid exists any more (not even a zombie).
bool process_gone(pid_t pid);

std::vector<std::string> split_lines(const std::string& text);
// The lines sorted and joined with '|': for comparing output whose rank order is not fixed.
std::string sorted_lines(const std::string& text);
bool starts_with(const std::string& text, const std::string& prefix);

}  // namespace run_test

#endif
