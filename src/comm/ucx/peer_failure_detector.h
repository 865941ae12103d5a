// Which peers cannot be used any more, and why. Three detectors feed it:
//  1. UCX: endpoints made with error handling report their peer's failure (error_handler), and the
//     transport reports operations that failed because of the peer, or that it gave up on it
//     (mark_failed);
//  2. /proc: a peer on this host whose process has exited (process_identity.h), which UCX cannot
//     report over shared memory (check_peer_process);
//  3. the store: ranks whose store connection closed, seen on any host (known_failures).
// It also remembers the peers a wait timed out on (mark_unresponsive): maybe alive, but not flushed
// at teardown, and the peers this rank gave up on after a failed call (mark_given_up): unusable here,
// but not known to have failed, so never announced to the job (revocation.h): a slow rank is not dead. The first reason a peer failed stays. Failures noticed while nothing waits on the peer
// are logged at debug level only: a job whose ranks finish in any order is normal.
//
// Not thread-safe: UCX calls the error handler from the progress of the one thread that drives the
// worker. Not copyable: the handlers UCX holds point into it.
#ifndef XFFL_SRC_COMM_UCX_PEER_FAILURE_DETECTOR_H
#define XFFL_SRC_COMM_UCX_PEER_FAILURE_DETECTOR_H

#include <string>
#include <vector>

#include "comm/exchange.h"
#include "comm/ucx/deadline.h"
#include "comm/ucx/peer_addresses.h"
#include "comm/ucx/ucx_api.h"
#include "comm/ucx/ucx_settings.h"

namespace xffl::comm::ucx {

// Whether a ucp_ep_create or operation status means the peer (or the way to it) is gone rather than
// UCX being unable to work at all: XFFL_EPEER for the former, XFFL_EBACKEND for the latter.
bool is_peer_side_failure(ucs_status_t status);

class PeerFailureDetector {
 public:
  // settings gives the log level at the time of each line. exchange, addresses and settings must
  // outlive it.
  PeerFailureDetector(int rank, int world_size, Exchange &exchange, PeerAddresses &addresses,
                      const UcxSettings &settings);
  PeerFailureDetector(const PeerFailureDetector &) = delete;
  PeerFailureDetector &operator=(const PeerFailureDetector &) = delete;

  // Why a peer cannot be used any more, or nullptr.
  const std::string *failure(int peer_rank) const;
  // Records that a peer failed (the first reason stays); debug log only. Only real evidence: UCX's
  // report, /proc, the store, or another rank's revoke notice.
  void mark_failed(int peer_rank, const std::string &why);
  // Records that this rank gave up on a peer (its endpoint force-closed after a failed call): it
  // cannot be used any more, but it is not known to have failed (confirmed stays false).
  void mark_given_up(int peer_rank, const std::string &why);
  // Whether the peer's failure rests on real evidence (mark_failed), not only on giving up.
  bool confirmed(int peer_rank) const;
  // A wait on this peer timed out. It may be alive (other groups keep using it), but at destruction
  // its endpoint is force-closed: a flush to a peer that stopped answering could only fail.
  void mark_unresponsive(int peer_rank);
  bool unresponsive(int peer_rank) const;

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

  // For an endpoint to peer_rank made with UCP_ERR_HANDLING_MODE_PEER: UCX calls it when the
  // endpoint fails, and it marks the peer failed in UCX's words. Valid as long as this detector.
  ucp_err_handler_t error_handler(int peer_rank);

 private:
  struct Peer {
    PeerFailureDetector *owner = nullptr;  // the error handler's argument is the Peer
    int rank = 0;
    bool failed = false;
    bool confirmed = false;  // failed through mark_failed
    bool unresponsive = false;
    std::string failure;
    bool lookup_tried = false;  // check_peer_process's one lookup
  };
  static void on_endpoint_error(void *arg, ucp_ep_h endpoint, ucs_status_t status);
  void log(xffl_log_level_t level, const std::string &text) const;

  int rank_;
  int world_size_;
  Exchange &exchange_;
  PeerAddresses &addresses_;
  const UcxSettings &settings_;
  std::vector<Peer> peers_;  // sized once: the error handlers hold pointers into it
};

}  // namespace xffl::comm::ucx

#endif
