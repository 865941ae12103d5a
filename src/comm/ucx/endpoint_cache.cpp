#include "comm/ucx/endpoint_cache.h"

#include <cstdio>

#include "comm/ucx/ucx_log_filter.h"
#include "common/error.h"
#include "common/log.h"

namespace xffl::comm::ucx {

EndpointCache::EndpointCache(int rank, int world_size, ucp_worker_h worker, const UcxSettings &settings,
                             PeerAddresses &addresses, PeerFailureDetector &failures)
    : rank_(rank), worker_(worker), settings_(settings), addresses_(addresses), failures_(failures),
      peers_(static_cast<size_t>(world_size)) {}

ucp_ep_h EndpointCache::endpoint(int peer_rank, Clock::time_point deadline) {
  Peer &peer = peers_.at(static_cast<size_t>(peer_rank));
  if (peer.endpoint) return peer.endpoint;
  if (const std::string *why = failures_.failure(peer_rank))
    fail(XFFL_EPEER, "rank ", rank_, ": rank ", peer_rank, " failed earlier (", *why, ")");
  const PublishedAddress &published = addresses_.look_up(peer_rank, deadline);

  // UCX 1.13's shared-memory transports cannot report a failed peer, so asking for that makes UCX
  // fall back to TCP over loopback, or (with UCX_{SYSV,POSIX}_ERROR_HANDLING=y) drop CMA: 3x slower
  // for large messages either way (numbers in ucx_log_filter.h). On one host we let UCX pick shared
  // memory and CMA; a dead neighbour is seen in /proc (check_peer_process) or by the timeout, and
  // ucx_log_filter.h keeps CMA's report of it from aborting the process. Settings may say otherwise.
  const bool same_host = published.host == addresses_.host();
  const bool detect_failure = !same_host || settings_.peer_failure_detection_on_host;
  ucp_ep_params_t params{};
  params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
  params.address = reinterpret_cast<const ucp_address_t *>(published.worker_address.data());
  params.err_mode = detect_failure ? UCP_ERR_HANDLING_MODE_PEER : UCP_ERR_HANDLING_MODE_NONE;
  peer.error_handling = detect_failure;
  if (detect_failure) {
    params.field_mask |= UCP_EP_PARAM_FIELD_ERR_HANDLER;
    params.err_handler = failures_.error_handler(peer_rank);
  }
  std::string ucx_words;  // what UCX said while failing, e.g. "shmat(shmid=...) failed: Invalid argument"
  ucs_status_t status;
  {
    RedirectUcxLines capture([&](const char *, const std::string &, const std::string &text) {
      if (ucx_words.empty()) ucx_words = text;
    });
    status = ucx().ucp_ep_create(worker_, &params, &peer.endpoint);
  }
  if (status != UCS_OK) {
    peer.endpoint = nullptr;
    const std::string why = std::string("UCX could not connect to it: ") + ucx().ucs_status_string(status) +
                            (ucx_words.empty() ? "" : " (" + ucx_words + ")");
    // A peer whose shared memory or connection is gone has failed; anything else is UCX's own trouble.
    if (!is_peer_side_failure(status)) fail(XFFL_EBACKEND, "rank ", rank_, ": rank ", peer_rank, ": ", why);
    failures_.mark_failed(peer_rank, why);
    fail(XFFL_EPEER, "rank ", rank_, ": rank ", peer_rank, " failed: ", why);
  }
  if (!ucx_words.empty()) log(XFFL_LOG_DEBUG, "UCX said while connecting to rank " + std::to_string(peer_rank) + ": " + ucx_words);
  if (settings_.log_level >= XFFL_LOG_DEBUG) {
    log(XFFL_LOG_DEBUG, "endpoint to rank " + std::to_string(peer_rank) + (same_host ? " (same host" : " (other host") +
                            (detect_failure ? ", peer failure detection on):" : ", failures found by timeout):"));
    ucx().ucp_ep_print_info(peer.endpoint, stderr);
  }
  return peer.endpoint;
}

bool EndpointCache::shares_memory_with(int peer_rank) const {
  const Peer &peer = peers_.at(static_cast<size_t>(peer_rank));
  return peer.endpoint && !peer.error_handling;
}

bool EndpointCache::tracks_requests(int peer_rank) const {
  return peers_.at(static_cast<size_t>(peer_rank)).error_handling;
}

void *EndpointCache::close(int peer_rank, bool force) {
  Peer &peer = peers_.at(static_cast<size_t>(peer_rank));
  if (!peer.endpoint) return nullptr;
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  param.flags = force ? UCP_EP_CLOSE_FLAG_FORCE : 0;
  ucs_status_ptr_t request = ucx().ucp_ep_close_nbx(peer.endpoint, &param);
  peer.endpoint = nullptr;
  return UCS_PTR_IS_PTR(request) ? request : nullptr;
}

std::vector<void *> EndpointCache::close_all() {
  std::vector<void *> closing;
  for (size_t rank = 0; rank < peers_.size(); ++rank) {
    if (!peers_[rank].endpoint) continue;
    const int peer_rank = static_cast<int>(rank);
    const bool gone = failures_.check_peer_process(peer_rank) || failures_.unresponsive(peer_rank);
    if (void *request = close(peer_rank, gone)) closing.push_back(request);
  }
  return closing;
}

void EndpointCache::log(xffl_log_level_t level, const std::string &text) const {
  Logger(settings_.log_level, rank_).write(level, text);
}

}  // namespace xffl::comm::ucx
