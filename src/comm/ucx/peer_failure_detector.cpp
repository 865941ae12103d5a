#include "comm/ucx/peer_failure_detector.h"

#include <algorithm>

#include "common/error.h"
#include "common/log.h"

namespace xffl::comm::ucx {

bool is_peer_side_failure(ucs_status_t status) {
  switch (status) {
    case UCS_ERR_SHMEM_SEGMENT:      // its shared memory is gone: the process exited
    case UCS_ERR_ENDPOINT_TIMEOUT:
    case UCS_ERR_UNREACHABLE:
    case UCS_ERR_CONNECTION_RESET:
    case UCS_ERR_REJECTED:
    case UCS_ERR_NOT_CONNECTED:
    case UCS_ERR_TIMED_OUT:
    case UCS_ERR_IO_ERROR:           // CMA could not reach its memory (see ucx_log_filter.h)
    case UCS_ERR_CANCELED:           // we force-closed the endpoint after the peer failed
      return true;
    default:
      return false;
  }
}

PeerFailureDetector::PeerFailureDetector(int rank, int world_size, Exchange &exchange, PeerAddresses &addresses,
                                         const UcxSettings &settings)
    : rank_(rank), world_size_(world_size), exchange_(exchange), addresses_(addresses), settings_(settings),
      peers_(static_cast<size_t>(world_size)) {
  for (int r = 0; r < world_size; ++r) {
    peers_[static_cast<size_t>(r)].owner = this;
    peers_[static_cast<size_t>(r)].rank = r;
  }
}

const std::string *PeerFailureDetector::failure(int peer_rank) const {
  const Peer &peer = peers_.at(static_cast<size_t>(peer_rank));
  return peer.failed ? &peer.failure : nullptr;
}

void PeerFailureDetector::mark_failed(int peer_rank, const std::string &why) {
  Peer &peer = peers_.at(static_cast<size_t>(peer_rank));
  if (peer.failed) return;
  peer.failed = true;
  peer.confirmed = true;
  peer.failure = why;
  log(XFFL_LOG_DEBUG, "rank " + std::to_string(peer_rank) + " failed: " + why);
}

void PeerFailureDetector::mark_given_up(int peer_rank, const std::string &why) {
  Peer &peer = peers_.at(static_cast<size_t>(peer_rank));
  if (peer.failed) return;
  peer.failed = true;
  peer.failure = why;
  log(XFFL_LOG_DEBUG, "gave up on rank " + std::to_string(peer_rank) + ": " + why);
}

bool PeerFailureDetector::confirmed(int peer_rank) const { return peers_.at(static_cast<size_t>(peer_rank)).confirmed; }

void PeerFailureDetector::mark_unresponsive(int peer_rank) {
  peers_.at(static_cast<size_t>(peer_rank)).unresponsive = true;
}

bool PeerFailureDetector::unresponsive(int peer_rank) const {
  return peers_.at(static_cast<size_t>(peer_rank)).unresponsive;
}

bool PeerFailureDetector::check_peer_process(int peer_rank, Clock::time_point lookup_deadline) {
  Peer &peer = peers_.at(static_cast<size_t>(peer_rank));
  if (!peer.failed && !addresses_.known(peer_rank) && !peer.lookup_tried) {
    peer.lookup_tried = true;
    try {
      addresses_.look_up(peer_rank, lookup_deadline);
    } catch (const Error &error) {
      log(XFFL_LOG_DEBUG, "could not look up rank " + std::to_string(peer_rank) + ": " + error.what());
    }
  }
  return check_peer_process(peer_rank);
}

bool PeerFailureDetector::check_peer_process(int peer_rank) {
  const Peer &peer = peers_.at(static_cast<size_t>(peer_rank));
  if (peer.failed) return true;
  const PublishedAddress *published = addresses_.known(peer_rank);
  if (!published || published->host != addresses_.host()) return false;
  if (process_liveness(published->process, addresses_.process()) != Liveness::gone) return false;
  mark_failed(peer_rank, "its process (pid " + std::to_string(published->process.pid) + " on this host) has exited");
  return true;
}

std::vector<std::string> PeerFailureDetector::known_failures(const std::vector<int> &members, int excluded,
                                                             Clock::time_point deadline) {
  std::vector<std::string> phrases;
  // Asked once: the store knows every rank that left, on any host or in any pid namespace, where
  // /proc only sees this host's. Bounded on its own (the store answers at once) so that a deadline
  // already spent still gets an answer; its failure (the store gone) is reported, never thrown, and
  // then no lookups are tried either: they would go to the same store.
  constexpr int kDepartedBoundMs = 1000;
  std::string lookup_failure;  // after one failed request (the store gone, most likely) we ask no more
  std::vector<int> departed;
  try {
    departed = exchange_.departed_ranks(std::clamp(remaining_ms(deadline), 100, kDepartedBoundMs));
  } catch (const Error &error) {
    lookup_failure = std::string("could not ask the store which ranks left: ") + error.what();
  }
  for (int member : departed)
    if (member >= 0 && member < world_size_ && member != rank_)
      mark_failed(member, "it left the job: its store connection closed");
  for (int member : members) {
    if (member == rank_ || member == excluded || member < 0 || member >= world_size_) continue;
    const Peer &peer = peers_[static_cast<size_t>(member)];
    if (!peer.failed && !addresses_.known(member) && lookup_failure.empty()) {
      try {
        addresses_.look_up(member, deadline);
      } catch (const Error &error) {
        lookup_failure = "could not look up rank " + std::to_string(member) + ": " + error.what();
      }
    }
    if (check_peer_process(member))
      phrases.push_back("rank " + std::to_string(member) + " is known to have failed (" + peer.failure + ")");
  }
  if (!lookup_failure.empty()) phrases.push_back(lookup_failure);
  return phrases;
}

ucp_err_handler_t PeerFailureDetector::error_handler(int peer_rank) {
  ucp_err_handler_t handler{};
  handler.cb = &PeerFailureDetector::on_endpoint_error;
  handler.arg = &peers_.at(static_cast<size_t>(peer_rank));
  return handler;
}

// Not a warning: peers that finish first close their endpoints, which UCX reports here too. A
// collective that needed the peer fails with its own error, naming it.
void PeerFailureDetector::on_endpoint_error(void *arg, ucp_ep_h, ucs_status_t status) {
  auto *peer = static_cast<Peer *>(arg);
  peer->owner->mark_failed(peer->rank, std::string("UCX reported ") + ucx().ucs_status_string(status));
}

void PeerFailureDetector::log(xffl_log_level_t level, const std::string &text) const {
  Logger(settings_.log_level, rank_).write(level, text);
}

}  // namespace xffl::comm::ucx
