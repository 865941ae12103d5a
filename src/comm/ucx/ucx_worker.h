// One UCX context and worker for one process (or one thread-as-rank in the tests), the endpoints to
// peers made lazily from the addresses they published, what is known about failed peers, and the
// waiting primitive that spins briefly and then sleeps on the worker's event fd.
//
// A peer counts as failed once UCX reports it (endpoints with error handling), an operation to it
// fails in the transport, we gave up on it, or, on this host, its process is seen to have exited
// (process_identity.h; UCX cannot report that over shared memory). Failures noticed while nothing
// waits on the peer are logged at debug level only: a job whose ranks finish in any order is normal.
//
// Not thread-safe (UCS_THREAD_MODE_SINGLE): one thread drives a backend and its communicators.
// Shared by the backend and its communicators, so either may be destroyed first.
#ifndef XFFL_SRC_COMM_UCX_UCX_WORKER_H
#define XFFL_SRC_COMM_UCX_UCX_WORKER_H

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "comm/algorithms/scratch.h"
#include "comm/exchange.h"
#include "comm/ucx/process_identity.h"
#include "comm/ucx/send_staging.h"
#include "comm/ucx/ucx_api.h"
#include "comm/ucx/ucx_settings.h"

namespace xffl::comm::ucx {

using Clock = std::chrono::steady_clock;

std::string address_key(int rank);

// The blob published under address_key: the host it runs on, which process it is there, and its UCX
// worker address.
struct PublishedAddress {
  std::string host;
  ProcessIdentity process;
  std::vector<uint8_t> worker_address;
};
std::string host_identity();
std::vector<uint8_t> encode_address(const std::string &host, const ProcessIdentity &process, const void *address,
                                    size_t length);
PublishedAddress decode_address(const std::vector<uint8_t> &value);  // empty worker_address if malformed

// Whether a ucp_ep_create status means the peer (or the way to it) is gone rather than UCX being
// unable to work at all: XFFL_EPEER for the former, XFFL_EBACKEND for the latter.
bool is_peer_side_failure(ucs_status_t status);

class UcxWorker {
 public:
  // Brings up context and worker and publishes this rank's worker address under address_key(rank).
  UcxWorker(int rank, int world_size, Exchange &exchange, const UcxSettings &settings);
  ~UcxWorker();
  UcxWorker(const UcxWorker &) = delete;
  UcxWorker &operator=(const UcxWorker &) = delete;

  int rank() const { return rank_; }
  int world_size() const { return world_size_; }
  UcxSettings &settings() { return settings_; }
  ucp_worker_h handle() const { return worker_; }

  // The endpoint to a global rank; fetches its address (waiting at most until deadline) on first use.
  // Throws XFFL_EPEER (the peer is marked failed) when UCX cannot connect because of the peer, e.g.
  // its shared memory is gone; XFFL_EBACKEND when UCX itself fails.
  ucp_ep_h endpoint(int peer_rank, Clock::time_point deadline);

  // Why a peer cannot be used any more, or nullptr.
  const std::string *failure(int peer_rank) const;
  // Records that a peer cannot be used any more (the first reason stays); debug log only.
  void mark_failed(int peer_rank, const std::string &why);
  // A wait on this peer timed out. It may be alive (other groups keep using it), but at destruction
  // its endpoint is force-closed: a flush to a peer that stopped answering could only fail.
  void mark_unresponsive(int peer_rank);
  // For a peer on this host: marks it failed and returns true if its process has exited. False when
  // it runs, or when that cannot be seen (other host, other pid namespace, address not known). With
  // a lookup deadline, an address not known yet is looked up once (a receive needs none), errors
  // ignored: the caller only wants to know whether the process is gone.
  bool check_peer_process(int peer_rank);
  bool check_peer_process(int peer_rank, Clock::time_point lookup_deadline);
  // What is known about the ranks in `members` (but this one and `excluded`) that failed, as "rank 3
  // is known to have failed (why)" phrases. Asks the store once which ranks left the job (their store
  // connection closed: seen on any host, marked failed), then looks up the published addresses it
  // lacks (at most until deadline) so that it can look at the processes on this host. A store request
  // that fails (the store is gone) is reported in its own words, and no more are tried.
  std::vector<std::string> known_failures(const std::vector<int> &members, int excluded, Clock::time_point deadline);

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

  void log(xffl_log_level_t level, const std::string &text) const;

  // Whether UCX reaches this peer through shared memory (and CMA for large messages): same host, and
  // its endpoint made without failure detection. False before the endpoint exists.
  bool shares_memory_with(int peer_rank) const;
  // Memory kept across collectives: the algorithms' scratch and the copies of large local sends.
  algorithms::ScratchStack &scratch() { return scratch_; }
  SendStaging &send_staging() { return send_staging_; }

 private:
  struct Peer {
    UcxWorker *owner = nullptr;
    int rank = 0;
    ucp_ep_h endpoint = nullptr;
    bool failed = false;
    bool unresponsive = false;
    bool error_handling = true;  // UCP_ERR_HANDLING_MODE_PEER; valid while or after endpoint is set
    std::string failure;
    bool looked_up = false;  // published is valid
    bool lookup_tried = false;
    PublishedAddress published;
  };
  static void on_peer_error(void *arg, ucp_ep_h endpoint, ucs_status_t status);
  const PublishedAddress &look_up(Peer &peer, Clock::time_point deadline);
  void close_endpoints(Clock::time_point deadline);
  void drain_closing(Clock::time_point deadline);

  int rank_;
  int world_size_;
  Exchange &exchange_;
  UcxSettings settings_;
  std::string host_;
  ProcessIdentity process_;
  ucp_context_h context_ = nullptr;
  ucp_worker_h worker_ = nullptr;
  ucp_address_t *address_ = nullptr;
  size_t address_length_ = 0;
  int event_fd_ = -1;
  std::vector<Peer> peers_;
  std::vector<void *> closing_;    // close requests still in flight
  std::vector<void *> abandoned_;  // given-up requests UCX has not completed yet
  algorithms::ScratchStack scratch_;
  SendStaging send_staging_;  // freed after ~UcxWorker has destroyed the UCX worker: no send reads it then
};

}  // namespace xffl::comm::ucx

#endif
