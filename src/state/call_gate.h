// One state's "call in progress" slot: every exported function that touches a state, or a group of
// that state, takes it for the length of the call, so a second thread calling into the same state
// at the same time gets XFFL_ESTATE naming the call in progress instead of corrupting the UCX
// worker (UCX runs in single-thread mode: two threads in one worker abort inside UCX).
//
// Shared (shared_ptr) by the state and each of its groups: an owned group may outlive its state and
// still needs a gate. A thread that already holds the gate passes again (nested internal calls).
//
// A nonblocking call (xffl_federated_average_start) holds the gate with a RequestHold, beyond the call
// that started it and bound to no thread: from its start until xffl_request_wait or xffl_request_test
// reports it done, or xffl_request_free ends it. Meanwhile enter() refuses with XFFL_ESTATE naming the
// request, and enter_read() lets the getters through: they read the plan and options, which nothing
// changes while the gate is held, and the request's thread reads them only. The hold is released only
// once no getter is inside, so a call that changes the state never overlaps one that reads it.
#ifndef XFFL_SRC_STATE_CALL_GATE_H
#define XFFL_SRC_STATE_CALL_GATE_H

#include <atomic>
#include <condition_variable>
#include <mutex>

#include "common/error.h"

namespace xffl {

class CallGate {
 public:
  // Holds the gate until destroyed; returned by enter (C++17 elision: never copied nor moved).
  class Pass {
   public:
    Pass(const Pass &) = delete;
    Pass &operator=(const Pass &) = delete;
    ~Pass() {
      if (!gate_) return;
      if (reader_) {
        gate_->leave_read();
        return;
      }
      held_here() = outer_;
      gate_->in_progress_.store(nullptr, std::memory_order_release);
    }

   private:
    friend class CallGate;
    explicit Pass(CallGate *gate, bool reader = false) : gate_(gate), outer_(held_here()), reader_(reader) {
      if (gate_ && !reader_) held_here() = gate_;
    }
    CallGate *gate_;      // nullptr: this thread held the gate already (nested call)
    const CallGate *outer_;
    bool reader_;         // a getter let through while a request holds the gate
  };

  // The gate held for a request in flight until release() or destruction (movable, bound to no thread).
  class RequestHold {
   public:
    RequestHold() = default;
    explicit RequestHold(CallGate *gate) : gate_(gate) {}
    RequestHold(RequestHold &&other) noexcept : gate_(other.gate_) { other.gate_ = nullptr; }
    RequestHold &operator=(RequestHold &&other) noexcept {
      if (this != &other) {
        release();
        gate_ = other.gate_;
        other.gate_ = nullptr;
      }
      return *this;
    }
    RequestHold(const RequestHold &) = delete;
    RequestHold &operator=(const RequestHold &) = delete;
    ~RequestHold() { release(); }
    void release() noexcept {
      if (gate_) gate_->end_request();
      gate_ = nullptr;
    }

   private:
    CallGate *gate_ = nullptr;
  };

  // Takes the gate for `call` (an exported function's name: a string literal) or throws XFFL_ESTATE
  // naming the call in progress.
  Pass enter(const char *call) {
    if (held_here() == this) return Pass(nullptr);
    const char *expected = nullptr;
    if (!in_progress_.compare_exchange_strong(expected, call, std::memory_order_acquire))
      refuse(call, expected);
    return Pass(this);
  }

  // As enter, for a call that only reads the plan or the options (a getter): it also passes while a
  // request holds the gate.
  Pass enter_read(const char *call) {
    if (held_here() == this) return Pass(nullptr);
    const char *expected = nullptr;
    if (in_progress_.compare_exchange_strong(expected, call, std::memory_order_acquire)) return Pass(this);
    {
      std::lock_guard<std::mutex> lock(request_mutex_);
      if (request_) {
        ++readers_;
        return Pass(this, true);
      }
    }
    refuse(call, expected);
  }

  // Takes the gate for a request started by `call` (a string literal), from a thread that does not
  // hold it, or throws XFFL_ESTATE naming the call in progress.
  RequestHold begin_request(const char *call) {
    if (held_here() == this)  // e.g. from a log callback: the call in progress holds the backend
      fail(XFFL_ESTATE, call, " from inside ", in_progress_.load(std::memory_order_relaxed),
           " on the same state: a request cannot start until that call returns");
    const char *expected = nullptr;
    if (!in_progress_.compare_exchange_strong(expected, call, std::memory_order_acquire)) refuse(call, expected);
    std::lock_guard<std::mutex> lock(request_mutex_);
    request_ = true;
    return RequestHold(this);
  }

 private:
  // The gate this thread holds (the innermost), so that nested calls pass.
  static const CallGate *&held_here() {
    thread_local const CallGate *held = nullptr;
    return held;
  }

  [[noreturn]] void refuse(const char *call, const char *in_progress) const {
    bool request = false;
    {
      std::lock_guard<std::mutex> lock(request_mutex_);
      request = request_;
    }
    if (request)
      fail(XFFL_ESTATE, call, " is refused while the request of ", in_progress,
           " is in flight on this state: until xffl_request_wait or xffl_request_test reports it done (or "
           "xffl_request_free ends it), only the getters (xffl_get_*, xffl_state_describe) may be called");
    fail(XFFL_ESTATE, in_progress, " is in progress on this state in another thread; calls on one state and its groups "
                      "must not overlap (distinct states are independent)");
  }

  void leave_read() {
    std::lock_guard<std::mutex> lock(request_mutex_);
    if (--readers_ == 0) readers_left_.notify_all();
  }

  // Waits for the getters inside (they return at once: none blocks), then opens the gate.
  void end_request() noexcept {
    std::unique_lock<std::mutex> lock(request_mutex_);
    readers_left_.wait(lock, [this] { return readers_ == 0; });
    request_ = false;
    in_progress_.store(nullptr, std::memory_order_release);
  }

  std::atomic<const char *> in_progress_{nullptr};
  mutable std::mutex request_mutex_;  // guards request_ and readers_
  std::condition_variable readers_left_;
  bool request_ = false;  // a RequestHold holds the gate
  int readers_ = 0;       // getters let through by enter_read while request_
};

}  // namespace xffl

#endif
