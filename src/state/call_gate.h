// One state's "call in progress" slot: every exported function that touches a state, or a group of
// that state, takes it for the length of the call, so a second thread calling into the same state
// at the same time gets XFFL_ESTATE naming the call in progress instead of corrupting the UCX
// worker (UCX runs in single-thread mode: two threads in one worker abort inside UCX).
//
// Shared (shared_ptr) by the state and each of its groups: an owned group may outlive its state and
// still needs a gate. A thread that already holds the gate passes again (nested internal calls).
#ifndef XFFL_SRC_STATE_CALL_GATE_H
#define XFFL_SRC_STATE_CALL_GATE_H

#include <atomic>

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
      held_here() = outer_;
      gate_->in_progress_.store(nullptr, std::memory_order_release);
    }

   private:
    friend class CallGate;
    explicit Pass(CallGate *gate) : gate_(gate), outer_(held_here()) {
      if (gate_) held_here() = gate_;
    }
    CallGate *gate_;      // nullptr: this thread held the gate already (nested call)
    const CallGate *outer_;
  };

  // Takes the gate for `call` (an exported function's name: a string literal) or throws XFFL_ESTATE
  // naming the call in progress.
  Pass enter(const char *call) {
    if (held_here() == this) return Pass(nullptr);
    const char *expected = nullptr;
    if (!in_progress_.compare_exchange_strong(expected, call, std::memory_order_acquire))
      fail(XFFL_ESTATE, expected, " is in progress on this state in another thread; calls on one state and its groups "
                        "must not overlap (distinct states are independent)");
    return Pass(this);
  }

 private:
  // The gate this thread holds (the innermost), so that nested calls pass.
  static const CallGate *&held_here() {
    thread_local const CallGate *held = nullptr;
    return held;
  }

  std::atomic<const char *> in_progress_{nullptr};
};

}  // namespace xffl

#endif
