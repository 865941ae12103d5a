// The program the xffl-run tests launch as every rank. Each argument is one step, run in order;
// "@R:step" runs the step on rank R only. Steps write with write(2), never through stdio buffers,
// so what a test sees is exactly what the step did.
//   env            one line "env NAME=value ..." with every launcher variable ("<unset>" if absent)
//   cpus           one line "cpus C1 C2 ..." with the CPUs this rank may run on (sched_getaffinity)
//   pid=DIR        DIR/<rank>.pid holds our pid (written atomically)
//   await=DIR:N    wait until DIR holds N "*.pid" files (bounded; exit 99 if they never come)
//   gone=DIR:R     wait until the process in DIR/R.pid no longer exists (bounded; exit 99 if it stays)
//   sleep=SEC      sleep (fractions allowed), resumed after signals we survive
//   exit=CODE      exit now with CODE
//   raise=SIG      send ourselves signal SIG (default disposition)
//   ignore=SIG     ignore signal SIG
//   trap=DIR       on SIGINT/SIGTERM/SIGHUP: DIR/<rank>.signal gets the number, then exit 0
//   note=DIR       on SIGINT/SIGTERM/SIGHUP: append the number to DIR/<rank>.signal and carry on
//   chatter=N      N lines to stdout and N to stderr, each written in three pieces
//   bytes          one stdout line with every byte value except '\n'
//   long=N         one stdout line of N pattern bytes
//   nolf=TEXT      TEXT on stdout without a newline
//   print=TEXT     TEXT and a newline on stdout
//   close          close stdout and stderr
//   touch=DIR      create DIR/<rank>.done
//   spawn=DIR      start a child in our process group that writes DIR/<rank>.child and sleeps 60 s;
//                  returns once the file is there
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <string>
#include <unistd.h>

namespace {

std::string g_rank = "?";
// DIR/<rank>.signal of trap= and note=, made before the handlers are installed: a signal handler may
// only do async-signal-safe work (open, write, close, _exit), so it neither builds strings nor
// formats with stdio (ThreadSanitizer reported both).
char g_signal_path[4096];

void write_all(int fd, const std::string& data) {
  std::size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

void write_file(const std::string& path, const std::string& content) {
  std::string temporary = path + ".tmp";
  int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) std::_Exit(98);
  write_all(fd, content);
  ::close(fd);
  ::rename(temporary.c_str(), path.c_str());
}

int count_files(const std::string& dir, const std::string& suffix) {
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

void sleep_seconds(double seconds) {
  timespec left{static_cast<time_t>(seconds), static_cast<long>((seconds - static_cast<double>(static_cast<time_t>(seconds))) * 1e9)};
  while (::nanosleep(&left, &left) != 0 && errno == EINTR) {
  }
}

void set_signal_path(const std::string& dir) {
  std::string path = dir + "/" + g_rank + ".signal";
  if (path.size() >= sizeof g_signal_path) {
    write_all(2, "probe: signal file path too long: " + path + "\n");
    std::_Exit(98);
  }
  std::memcpy(g_signal_path, path.c_str(), path.size() + 1);
}

// Writes SIGNO in decimal (plus a newline when NEWLINE) to g_signal_path, opened with FLAGS.
// Async-signal-safe: digits by hand, then open/write/close; errno is left as it was.
void write_signal_number(int signo, int flags, bool newline) {
  const int saved_errno = errno;
  char digits[12];
  std::size_t count = 0;
  unsigned value = static_cast<unsigned>(signo);
  do {
    digits[count++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value != 0 && count < sizeof digits);
  char text[sizeof digits + 1];
  std::size_t length = 0;
  while (count > 0) text[length++] = digits[--count];
  if (newline) text[length++] = '\n';
  int fd = ::open(g_signal_path, O_WRONLY | O_CREAT | flags, 0644);
  if (fd >= 0) {
    ssize_t ignored = ::write(fd, text, length);
    (void)ignored;
    ::close(fd);
  }
  errno = saved_errno;
}

void on_trapped_signal(int signo) {
  write_signal_number(signo, O_TRUNC, false);
  ::_exit(0);
}

void on_noted_signal(int signo) { write_signal_number(signo, O_APPEND, true); }

const char* kVariables[] = {"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK",
                            "GROUP_WORLD_SIZE", "ROLE_RANK", "ROLE_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
                            "TORCHELASTIC_RUN_ID", "XFFL_JOB_ID", "XFFL_FEDERATED", "XFFL_HSDP", "XFFL_BACKEND",
                            "XFFL_STREAMS", "XFFL_TIMEOUT", "XFFL_FEDERATED_LOCAL_WORLD_SIZE", "XFFL_PROBE_INHERITED",
                            "XFFL_FACILITY", "XFFL_FEDERATION"};

void run_step(const std::string& step) {
  std::string name = step.substr(0, step.find('='));
  std::string value = step.find('=') == std::string::npos ? "" : step.substr(step.find('=') + 1);
  if (name == "env") {
    std::string line = "env";
    for (const char* variable : kVariables) {
      const char* v = std::getenv(variable);
      line += std::string(" ") + variable + "=" + (v ? v : "<unset>");
    }
    write_all(1, line + "\n");
  } else if (name == "cpus") {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (::sched_getaffinity(0, sizeof set, &set) != 0) std::_Exit(98);
    std::string line = "cpus";
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
      if (CPU_ISSET(cpu, &set)) line += " " + std::to_string(cpu);
    write_all(1, line + "\n");
  } else if (name == "pid") {
    write_file(value + "/" + g_rank + ".pid", std::to_string(::getpid()));
  } else if (name == "await") {
    std::string dir = value.substr(0, value.rfind(':'));
    int wanted = std::atoi(value.substr(value.rfind(':') + 1).c_str());
    for (int tries = 0; count_files(dir, ".pid") < wanted; ++tries) {
      if (tries > 3000) {
        write_all(2, "probe: peers never wrote their pid files\n");
        std::_Exit(99);
      }
      sleep_seconds(0.01);
    }
  } else if (name == "gone") {
    std::string path = value.substr(0, value.rfind(':')) + "/" + value.substr(value.rfind(':') + 1) + ".pid";
    for (int tries = 0;; ++tries) {
      if (tries > 3000) std::_Exit(99);
      int fd = ::open(path.c_str(), O_RDONLY);
      char text[32] = {0};
      if (fd >= 0) {
        ssize_t ignored = ::read(fd, text, sizeof text - 1);
        (void)ignored;
        ::close(fd);
        if (::kill(static_cast<pid_t>(std::atol(text)), 0) != 0 && errno == ESRCH) break;
      }
      sleep_seconds(0.01);
    }
  } else if (name == "sleep") {
    sleep_seconds(std::atof(value.c_str()));
  } else if (name == "exit") {
    std::_Exit(std::atoi(value.c_str()));
  } else if (name == "raise") {
    int signo = std::atoi(value.c_str());
    std::signal(signo, SIG_DFL);
    std::raise(signo);
  } else if (name == "ignore") {
    std::signal(std::atoi(value.c_str()), SIG_IGN);
  } else if (name == "trap") {
    set_signal_path(value);
    for (int signo : {SIGINT, SIGTERM, SIGHUP}) std::signal(signo, on_trapped_signal);
  } else if (name == "note") {
    set_signal_path(value);
    for (int signo : {SIGINT, SIGTERM, SIGHUP}) std::signal(signo, on_noted_signal);
  } else if (name == "chatter") {
    int lines = std::atoi(value.c_str());
    for (int i = 0; i < lines; ++i) {
      std::string body = "rank " + g_rank + " line " + std::to_string(i) + " ";
      write_all(1, body);
      sched_yield();
      write_all(1, std::string(40, static_cast<char>('a' + i % 26)));
      sched_yield();
      write_all(1, " end\n");
      write_all(2, "rank " + g_rank + " err " + std::to_string(i));
      write_all(2, " end\n");
    }
  } else if (name == "bytes") {
    std::string line;
    for (int byte = 0; byte < 256; ++byte)
      if (byte != '\n') line += static_cast<char>(byte);
    write_all(1, line + "\n");
  } else if (name == "long") {
    std::string line;
    long length = std::atol(value.c_str());
    for (long i = 0; i < length; ++i) line += static_cast<char>('a' + i % 26);
    write_all(1, line + "\n");
  } else if (name == "nolf") {
    write_all(1, value);
  } else if (name == "print") {
    write_all(1, value + "\n");
  } else if (name == "close") {
    ::close(1);
    ::close(2);
  } else if (name == "touch") {
    write_file(value + "/" + g_rank + ".done", "done");
  } else if (name == "spawn") {
    pid_t child = ::fork();
    if (child == 0) {
      write_file(value + "/" + g_rank + ".child", std::to_string(::getpid()));
      sleep_seconds(60);
      std::_Exit(0);
    }
    for (int tries = 0; ::access((value + "/" + g_rank + ".child").c_str(), F_OK) != 0; ++tries) {
      if (tries > 3000) std::_Exit(99);
      sleep_seconds(0.01);
    }
  } else {
    write_all(2, "probe: unknown step " + step + "\n");
    std::_Exit(98);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (const char* rank = std::getenv("RANK")) g_rank = rank;
  for (int i = 1; i < argc; ++i) {
    std::string step = argv[i];
    if (step[0] == '@') {
      std::string::size_type colon = step.find(':');
      if (step.substr(1, colon - 1) != g_rank) continue;
      step = step.substr(colon + 1);
    }
    run_step(step);
  }
  return 0;
}
