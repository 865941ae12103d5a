// One UCX context and worker for one process (or one thread-as-rank in the tests): brings them up,
// tears them down in the order UCX needs, makes progress (a short spin, then a sleep on the worker's
// event fd), and reaps the requests given up on. It owns the parts that do the rest, one job each:
//   peer_addresses.h         this rank's published address and its peers'
//   peer_failure_detector.h  which peers failed and why (UCX's reports, /proc, the store)
//   endpoint_cache.h         the endpoints to peers, made on first use
//   memory_pools.h           the memory kept across collectives
//   revocation.h             the revoke notice's wire format
// and does what needs several of them (abandon_peer, the revocation, the teardown).
//
// Revocation: once a rank knows that a member failed (its own wait found it, or a revoke notice
// said so), the job is revoked for it: every wait of every later or ongoing collective, on any
// group, ends with XFFL_EPEER naming the failed rank. Nothing revives a revoked job.
//
// Not thread-safe (UCS_THREAD_MODE_SINGLE): one thread drives a backend and its communicators.
// Shared by the backend and its communicators, so either may be destroyed first.
#ifndef XFFL_SRC_COMM_UCX_UCX_WORKER_H
#define XFFL_SRC_COMM_UCX_UCX_WORKER_H

#include <cstddef>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "comm/exchange.h"
#include "comm/ucx/deadline.h"
#include "comm/ucx/endpoint_cache.h"
#include "comm/ucx/memory_pools.h"
#include "comm/ucx/peer_addresses.h"
#include "comm/ucx/peer_failure_detector.h"
#include "comm/ucx/revocation.h"
#include "comm/ucx/ucx_api.h"
#include "comm/ucx/ucx_settings.h"

namespace xffl::comm::ucx {

class UcxWorker {
 public:
  // Brings up context and worker and publishes this rank's worker address under address_key(rank).
  UcxWorker(int rank, int world_size, Exchange &exchange, const UcxSettings &settings);
  // Releases the given-up requests that complete in time, closes the endpoints (endpoint_cache.h),
  // then destroys the UCX worker and context; at most min(timeout, 1 s) of waiting in all.
  ~UcxWorker();
  UcxWorker(const UcxWorker &) = delete;
  UcxWorker &operator=(const UcxWorker &) = delete;

  int rank() const { return rank_; }
  int world_size() const { return world_size_; }
  UcxSettings &settings() { return settings_; }
  ucp_worker_h handle() const { return ucx_.worker; }

  PeerFailureDetector &failures() { return failures_; }
  PeerAddresses &addresses() { return addresses_; }
  EndpointCache &endpoints() { return endpoints_; }
  MemoryPools &pools() { return pools_; }

  // Makes progress; if nothing happens within a short spin, sleeps on the event fd (at most 100 ms,
  // never past deadline). The caller checks its condition after every return.
  void progress_or_sleep(Clock::time_point deadline);

  // Force-closes the endpoint so that UCX releases outstanding sends (and the caller's buffers)
  // at once; the peer counts as failed from then on. Returns whether UCX will complete the sends
  // that were outstanding to it: only endpoints with error handling track their requests, so on
  // the others (same host) a large send waiting for a dead peer's reply never completes.
  bool abandon_peer(int peer_rank, const std::string &why);

  // Requests given up on (cancelled receives, sends to abandoned peers): progressed until UCX
  // completes them, at most until deadline, then released. UCX would otherwise complain at
  // destruction that they never came back to its pool. Waits only for the ones just handed over.
  void release_abandoned(std::vector<void *> requests, Clock::time_point deadline);

  // Fetches the job's address table (PeerAddresses::look_up_all), within the timeout. Called once
  // every rank has published (after the set_global barrier), so that endpoints, liveness checks and
  // revoke notices need no store afterwards. A failure is logged (warn), never thrown: what is
  // missing is then looked up on first need.
  void load_address_table();

  // What this rank knows of the job's revocation: the first failed rank it learned of.
  struct Revocation {
    int failed_rank = -1;
    int detector = -1;  // the rank that saw the failure
    std::string why;    // the detector's words
  };
  // The first time for each failed rank: revokes the job on this rank and sends a revoke notice to
  // every peer this rank reaches (but the failed one, `skip`, and those given up on), making
  // endpoints from the address table where none exists; at most kAnnounceBound in all. Only for a
  // failure with real evidence (PeerFailureDetector::confirmed), never for a slow peer.
  void announce_failure(int failed_rank, const std::string &why, int detector, int skip = -1);
  // Takes the revoke notices that arrived: marks each failed rank failed and announces it on (once);
  // then returns the job's revocation as this rank knows it, or nullptr while there is none.
  const Revocation *poll_revocation();

  void log(xffl_log_level_t level, const std::string &text) const;

 private:
  // The UCX context and worker, and the worker's address. The constructor makes them (undoing its
  // own steps when one fails); close() releases them, in UCX's order. ~UcxWorker calls close() as
  // the last step of its teardown; the destructor closes only what a failed UcxWorker constructor
  // left behind.
  struct Ucx {
    Ucx(int rank, int world_size, const UcxSettings &settings);
    ~Ucx() { close(); }
    Ucx(const Ucx &) = delete;
    Ucx &operator=(const Ucx &) = delete;
    void close();

    Clock::time_point started = Clock::now();  // for the log line saying how long bring-up took
    ucp_context_h context = nullptr;
    ucp_worker_h worker = nullptr;
    ucp_address_t *address = nullptr;
    size_t address_length = 0;
    int event_fd = -1;
  };
  // Progresses the worker until each request is complete or deadline has passed; frees the completed
  // ones and leaves the others in `requests`.
  void reap(std::vector<void *> &requests, Clock::time_point deadline);
  // reap, then frees what is left: UCX releases such a request when it completes.
  void reap_and_free(std::vector<void *> requests, Clock::time_point deadline);

  int rank_;
  int world_size_;
  UcxSettings settings_;
  // Made in this order and destroyed in the reverse one. ~UcxWorker has closed the endpoints and the
  // UCX worker before any of them is destroyed; the pools, first made, go last: a send UCX was given
  // up on may read a staged copy until the UCX worker is gone. The parts hold references to those
  // made before them (the error handlers of endpoints point into failures_).
  MemoryPools pools_;
  Ucx ucx_;
  PeerAddresses addresses_;
  PeerFailureDetector failures_;
  EndpointCache endpoints_;
  std::vector<void *> abandoned_;  // given-up requests UCX has not completed yet
  std::vector<bool> announced_;    // per failed rank: its revoke notice went out from here
  std::deque<RevokeNotice> sent_notices_;  // what sends of revoke notices read; stable addresses
  std::optional<Revocation> revocation_;
};

}  // namespace xffl::comm::ucx

#endif
