#include "comm/nccl/watchdog.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "comm/nccl/nccl_types.h"
#include "common/error.h"

namespace xffl::comm::nccl {

namespace {

using Clock = std::chrono::steady_clock;

// Yields for the first millisecond (a collective often ends within microseconds, and a thread woken
// from sleep comes 50 us late or more: the kernel's default timer slack), then sleeps a sixteenth of the
// time waited so far, at most 1 ms. So the wait ends at most about 6% (plus the slack) after the work,
// whatever its length, and a long wait wakes about 1000 times a second instead of burning a core the
// training code may need. (A fixed count of yields followed by doubling sleeps could end a whole pause
// after the work: on an H200 a 2 ms allreduce ran at 0.69 of cudaStreamSynchronize's rate; now 0.97-0.99.
// bench/gpu/README.md.)
class Poller {
 public:
  explicit Poller(int timeout_ms)
      : start_(Clock::now()), deadline_(start_ + std::chrono::milliseconds(timeout_ms)) {}
  bool expired() const { return Clock::now() >= deadline_; }
  void pause() {
    const Clock::duration waited = Clock::now() - start_;
    if (waited < kYieldFor) {
      std::this_thread::yield();
      return;
    }
    std::this_thread::sleep_for(std::min<Clock::duration>(waited / 16, kLongestSleep));
  }

 private:
  static constexpr std::chrono::microseconds kYieldFor{1000};
  static constexpr std::chrono::microseconds kLongestSleep{1000};
  Clock::time_point start_;
  Clock::time_point deadline_;
};

std::string who(const WaitSubject &subject) { return "rank " + std::to_string(subject.rank) + ": "; }

[[noreturn]] void fail_timeout(const std::vector<NcclComm *> &comms, const WaitSubject &subject, int timeout_ms) {
  const std::string message = who(subject) + "timed out after " + std::to_string(timeout_ms) + " ms in " +
                              subject.group + " waiting for " + subject.awaited +
                              "; the NCCL communicator was aborted";
  for (NcclComm *comm : comms)
    if (comm) comm->abort(XFFL_ETIMEOUT, message);
  throw Error(XFFL_ETIMEOUT, message);
}

[[noreturn]] void fail_async(NcclApi &api, NcclComm &comm, int async_code, const WaitSubject &subject) {
  const xffl_status_t status = status_of_async_nccl(async_code);
  const std::string words = api.nccl_error_string(async_code, comm.handle());
  const std::string message = who(subject) + (status == XFFL_EPEER ? "a peer failed in " : "NCCL failed in ") +
                              subject.group + " while waiting for " + subject.awaited + ": NCCL says " + words +
                              "; the NCCL communicator was aborted";
  comm.abort(status, message);
  throw Error(status, message);
}

// kNcclSuccess, kNcclInProgress, or throws after aborting the communicator. An aborted one is gone
// (NCCL freed it): its recorded failure is thrown without asking NCCL.
int poll_async(NcclApi &api, NcclComm &comm, const WaitSubject &subject) {
  comm.check_usable(subject);
  int state = kNcclSuccess;
  const int rc = api.comm_get_async_error(comm.handle(), &state);
  if (rc != kNcclSuccess) fail_async(api, comm, rc, subject);
  if (state != kNcclSuccess && state != kNcclInProgress) fail_async(api, comm, state, subject);
  return state;
}

}  // namespace

NcclComm::NcclComm(std::shared_ptr<NcclApi> api, Comm handle, int size)
    : api_(std::move(api)), handle_(handle), size_(size) {}

NcclComm::~NcclComm() {
  if (aborted_ || !handle_) return;
  // Finalize flushes outstanding work and normally answers kNcclInProgress: polled until quiescent,
  // then destroyed. A peer that vanished could keep the flush from finishing, so the wait is short
  // and abort is the way out (destruction is local and never blocks on peers).
  int rc = api_->comm_finalize(handle_);
  if (rc == kNcclSuccess || rc == kNcclInProgress) {
    Poller poller(destroy_grace_ms_);
    int state = kNcclInProgress;
    for (;;) {
      rc = api_->comm_get_async_error(handle_, &state);
      if (rc != kNcclSuccess || state != kNcclInProgress || poller.expired()) break;
      poller.pause();
    }
    if (rc == kNcclSuccess && state == kNcclSuccess) {
      api_->comm_destroy(handle_);
      return;
    }
  }
  api_->comm_abort(handle_);
}

void NcclComm::check_usable(const WaitSubject &subject) const {
  if (aborted_)
    throw Error(failure_status_, who(subject) + "the NCCL communicator of " + subject.group +
                                     " was aborted earlier (" + failure_ + "); create a new state to continue");
}

void NcclComm::abort(xffl_status_t status, const std::string &reason) {
  if (aborted_) return;
  aborted_ = true;
  failure_status_ = status;
  failure_ = reason;
  if (handle_) api_->comm_abort(handle_);
}

void await_ready(NcclApi &api, const std::vector<NcclComm *> &comms, const WaitSubject &subject, int timeout_ms) {
  Poller poller(timeout_ms);
  for (;;) {
    bool busy = false;
    for (NcclComm *comm : comms)
      if (comm && poll_async(api, *comm, subject) == kNcclInProgress) busy = true;
    if (!busy) return;
    if (poller.expired()) fail_timeout(comms, subject, timeout_ms);
    poller.pause();
  }
}

void await_stream(NcclApi &api, NcclComm *comm, Stream stream, const WaitSubject &subject, int timeout_ms) {
  Poller poller(timeout_ms);
  for (;;) {
    const int rc = api.stream_query(stream);
    if (rc == kCudaSuccess) return;
    if (rc != kCudaErrorNotReady) {
      const std::string message = who(subject) + "CUDA failed in " + subject.group + " while waiting for " +
                                  subject.awaited + ": " + api.cuda_error_string(rc);
      if (comm) comm->abort(status_of_cuda(rc), message);
      throw Error(status_of_cuda(rc), message);
    }
    if (comm) poll_async(api, *comm, subject);
    if (poller.expired()) fail_timeout({comm}, subject, timeout_ms);
    poller.pause();
  }
}

}  // namespace xffl::comm::nccl
