#include "signal_watch.h"

#include <cerrno>
#include <fcntl.h>
#include <unistd.h>

#include "errors.h"

namespace xffl_run {
namespace {

// A signal handler can only reach static storage; these are written by the handler and read by take().
volatile sig_atomic_t g_arrived[NSIG];
int g_wake_write_fd = -1;
int g_wake_read_fd = -1;

constexpr int kWatched[] = {SIGINT, SIGTERM, SIGHUP, SIGCHLD};

void on_signal(int signo) {
  int saved_errno = errno;
  g_arrived[signo] = 1;
  char byte = 0;
  // Non-blocking: if the pipe is full a wake-up is already pending, and the flag above holds the news.
  ssize_t ignored = ::write(g_wake_write_fd, &byte, 1);
  (void)ignored;
  errno = saved_errno;
}

}  // namespace

SignalWatch::SignalWatch() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) throw SystemError("pipe", errno);
  g_wake_read_fd = fds[0];
  g_wake_write_fd = fds[1];
  // Ranks start with our mask minus the watched signals: a rank that cannot see SIGTERM could only
  // be stopped by SIGKILL.
  ::sigprocmask(SIG_SETMASK, nullptr, &startup_mask_);
  for (int signo : kWatched) sigdelset(&startup_mask_, signo);

  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART | SA_NOCLDSTOP;
  for (int signo : kWatched) ::sigaction(signo, &action, nullptr);
  ::signal(SIGPIPE, SIG_IGN);

  // We may have been started with these blocked (some job runners do); we rely on seeing them.
  sigset_t watched;
  sigemptyset(&watched);
  for (int signo : kWatched) sigaddset(&watched, signo);
  ::sigprocmask(SIG_UNBLOCK, &watched, nullptr);
}

SignalWatch::~SignalWatch() {
  for (int signo : kWatched) ::signal(signo, SIG_DFL);
  ::close(g_wake_read_fd);
  ::close(g_wake_write_fd);
  g_wake_read_fd = g_wake_write_fd = -1;
}

int SignalWatch::wake_fd() const { return g_wake_read_fd; }

SignalWatch::Arrived SignalWatch::take() {
  char drain[64];
  while (::read(g_wake_read_fd, drain, sizeof drain) > 0) {
  }
  Arrived arrived;
  if (g_arrived[SIGCHLD]) {
    g_arrived[SIGCHLD] = 0;
    arrived.child_changed = true;
  }
  for (int signo : kForwardedSignals) {
    if (g_arrived[signo]) {
      g_arrived[signo] = 0;
      arrived.forwarded.push_back(signo);
    }
  }
  return arrived;
}

SignalWatch::BlockedScope::BlockedScope() {
  sigset_t watched;
  sigemptyset(&watched);
  for (int signo : kWatched) sigaddset(&watched, signo);
  ::sigprocmask(SIG_BLOCK, &watched, &previous_);
}

SignalWatch::BlockedScope::~BlockedScope() { ::sigprocmask(SIG_SETMASK, &previous_, nullptr); }

void SignalWatch::restore_in_child() const {
  for (int signo : kWatched) ::signal(signo, SIG_DFL);
  ::signal(SIGPIPE, SIG_DFL);  // an ignored signal would survive exec
  ::sigprocmask(SIG_SETMASK, &startup_mask_, nullptr);
}

}  // namespace xffl_run
