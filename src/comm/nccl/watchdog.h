// The NCCL backend's waits: every one polls (nonblocking communicators, cudaStreamQuery) against a
// deadline, so a dead or silent peer gives XFFL_ETIMEOUT or XFFL_EPEER after ncclCommAbort, never a
// hang. A communicator that was aborted stays so, and every later use says why.
#ifndef XFFL_SRC_COMM_NCCL_WATCHDOG_H
#define XFFL_SRC_COMM_NCCL_WATCHDOG_H

#include <memory>
#include <string>
#include <vector>

#include "comm/nccl/nccl_api.h"
#include "xffl/types.h"

namespace xffl::comm::nccl {

// Who waits for what, to name it when the wait fails.
struct WaitSubject {
  int rank = 0;
  std::string group;    // "federated group (instance 1) of rank 3"
  std::string awaited;  // "allreduce of 1024 f32 (avg)"
};

// One NCCL communicator of this rank. Destruction is bounded and local: a healthy communicator is
// finalized and destroyed (aborted if finalizing does not finish within a few seconds), an aborted
// one is already gone.
class NcclComm {
 public:
  NcclComm(std::shared_ptr<NcclApi> api, Comm handle, int size);
  ~NcclComm();
  NcclComm(const NcclComm &) = delete;
  NcclComm &operator=(const NcclComm &) = delete;

  Comm handle() const { return handle_; }
  int size() const { return size_; }
  bool aborted() const { return aborted_; }
  // Throws the recorded failure when the communicator was aborted.
  void check_usable(const WaitSubject &subject) const;
  // ncclCommAbort, once; remembers status and reason for later uses.
  void abort(xffl_status_t status, const std::string &reason);
  void set_destroy_grace_ms(int ms) { destroy_grace_ms_ = ms; }

 private:
  std::shared_ptr<NcclApi> api_;
  Comm handle_;
  int size_;
  bool aborted_ = false;
  xffl_status_t failure_status_ = XFFL_OK;
  std::string failure_;
  int destroy_grace_ms_ = 2000;
};

// Polls until every communicator has left kNcclInProgress (after a nonblocking init, split or call).
void await_ready(NcclApi &api, const std::vector<NcclComm *> &comms, const WaitSubject &subject, int timeout_ms);

// Polls until the stream is idle, watching comm's asynchronous error meanwhile (comm may be null for
// a group of one). Timeout: abort comm, XFFL_ETIMEOUT. Peer failure: abort, XFFL_EPEER.
void await_stream(NcclApi &api, NcclComm *comm, Stream stream, const WaitSubject &subject, int timeout_ms);

}  // namespace xffl::comm::nccl

#endif
