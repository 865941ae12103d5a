// One nonblocking call in flight (xffl_federated_average_start): the blocking schedule runs unchanged
// on a thread the request owns, while the state's call gate is held for it (call_gate.h), so nothing
// else drives the state's UCX worker or NCCL communicators meanwhile (UCX runs in single-thread mode:
// one thread at a time). The result is therefore the blocking call's, bit for bit. Under
// XFFL_FACILITY_FAULTS_CONTINUE in facility mode the schedule is FacilityRounds::average (its round
// protocol and store connections are used by one thread at a time, whichever: facility_rounds.h).
//
// Why a thread and not a progress-driven state machine: every collective and strategy would have to
// be rewritten as resumable steps, and each wire format and transport added later with them; a thread
// runs the one schedule they already share. It waits as the blocking call does (every wait bounded
// by XFFL_TIMEOUT), so a request ends on its own, with the status the blocking call would return.
// The caller's thread never spins on it: wait sleeps on a condition variable.
#ifndef XFFL_SRC_STATE_REQUEST_H
#define XFFL_SRC_STATE_REQUEST_H

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "state/call_gate.h"
#include "xffl/types.h"

namespace xffl {

class Request {
 public:
  // Starts `work` on the request's own thread. `hold` keeps `gate` (the state's) until the caller has
  // seen the end (wait, test) or the request is destroyed. `call` names the starting function.
  Request(std::shared_ptr<CallGate> gate, CallGate::RequestHold hold, const char *call, std::function<void()> work);
  // Waits for the work to end (bounded as the blocking call is), then releases the gate.
  ~Request();
  Request(const Request &) = delete;
  Request &operator=(const Request &) = delete;

  // Whether the work has ended; once it has, the gate is released and the status is final.
  bool test();
  // Blocks until the work has ended (sleeping), then releases the gate.
  void wait();
  // Blocks until the work has ended, without releasing the gate: the state being destroyed needs its
  // backend idle, and the caller still sees the result through wait or test.
  void finish_run();

  // The work's result, meaningful once test() or wait() returned: XFFL_OK, or the status and message
  // the blocking call would have failed with.
  xffl_status_t status() const { return status_; }
  const std::string &message() const { return message_; }
  const char *call() const { return call_; }

 private:
  void run(std::function<void()> work) noexcept;
  void join_and_release();

  std::shared_ptr<CallGate> gate_;  // kept alive: the request may outlive its state
  CallGate::RequestHold hold_;
  const char *call_;
  std::mutex mutex_;  // guards done_, status_, message_ until done_; joined_ and hold_ after
  std::condition_variable ended_;
  bool done_ = false;
  bool joined_ = false;
  xffl_status_t status_ = XFFL_OK;
  std::string message_;
  std::thread thread_;  // last: starts once every other member exists
};

}  // namespace xffl

// The C handle: the caller's share of the request (the state keeps a weak one, for its destroy).
struct xffl_request final {
  std::shared_ptr<xffl::Request> request;
};

#endif
