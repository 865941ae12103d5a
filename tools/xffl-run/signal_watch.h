// Turns SIGINT, SIGTERM, SIGHUP and SIGCHLD into readiness of a pipe the supervisor polls.
#ifndef XFFL_RUN_SIGNAL_WATCH_H
#define XFFL_RUN_SIGNAL_WATCH_H

#include <csignal>
#include <vector>

namespace xffl_run {

// The signals xffl-run forwards to every rank.
constexpr int kForwardedSignals[] = {SIGINT, SIGTERM, SIGHUP};

// One per process (signal handlers are process-wide). Also ignores SIGPIPE, so a reader of our
// output going away is an error on write, not our death.
class SignalWatch {
 public:
  SignalWatch();
  ~SignalWatch();
  SignalWatch(const SignalWatch&) = delete;
  SignalWatch& operator=(const SignalWatch&) = delete;

  // Readable when a watched signal arrived since the last take().
  int wake_fd() const;

  struct Arrived {
    bool child_changed = false;
    std::vector<int> forwarded;  // SIGINT / SIGTERM / SIGHUP, in a fixed order
  };
  Arrived take();

  // Blocks the watched signals while alive, so fork() cannot hand a child our handlers mid-signal.
  class BlockedScope {
   public:
    BlockedScope();
    ~BlockedScope();
    BlockedScope(const BlockedScope&) = delete;
    BlockedScope& operator=(const BlockedScope&) = delete;

   private:
    sigset_t previous_;
  };

  // In a freshly forked child, before exec: default dispositions, watched signals unblocked.
  // Async-signal-safe.
  void restore_in_child() const;

 private:
  sigset_t startup_mask_;
};

}  // namespace xffl_run

#endif
