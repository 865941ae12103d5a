// A check the crossing backend runs on every iteration of its waits (wan: comm/wan/striped_links.h, and
// the dialling of a peer), through which something outside the backend can end a crossing wait early:
// a federation coordinator that learns a facility is lost ends the waits on that facility's senders
// instead of letting them run to the timeout. The check throws xffl::Error to end the wait; the
// backend then fails the collective with that status and message, as for any other failure.
//
// No check is set by default (the waits run to completion or the timeout). Thread-safe: the check may
// be set or cleared from another thread while a wait polls it.
#ifndef XFFL_SRC_COMM_CROSSING_WAIT_HOOK_H
#define XFFL_SRC_COMM_CROSSING_WAIT_HOOK_H

#include <functional>
#include <mutex>
#include <utility>

namespace xffl::comm {

class CrossingWaitHook {
 public:
  // Sets the check (an empty function clears it). It runs on the thread that waits, often (every poll
  // slice): it must be cheap and must not call into the backend.
  void set(std::function<void()> check) {
    std::lock_guard<std::mutex> lock(mutex_);
    check_ = std::move(check);
  }
  // Runs the check, if any; whatever it throws ends the caller's wait.
  void poll() const {
    std::function<void()> check;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      check = check_;
    }
    if (check) check();
  }

 private:
  mutable std::mutex mutex_;
  std::function<void()> check_;
};

}  // namespace xffl::comm

#endif
