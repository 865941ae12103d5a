// The endpoint to each peer: made on first use from the address the peer published (peer_addresses.h)
// and kept until it is closed. A peer known to have failed is refused (XFFL_EPEER) and never gets an
// endpoint again. Endpoints to other hosts report failures to the detector (peer_failure_detector.h);
// those on this host use shared memory and CMA, which cannot (see endpoint()).
//
// It only makes and closes endpoints: the close requests UCX returns go back to the caller, which
// progresses the worker until they complete (ucx_worker.h). Not thread-safe: one thread drives the
// worker that owns it.
#ifndef XFFL_SRC_COMM_UCX_ENDPOINT_CACHE_H
#define XFFL_SRC_COMM_UCX_ENDPOINT_CACHE_H

#include <vector>

#include "comm/ucx/deadline.h"
#include "comm/ucx/peer_addresses.h"
#include "comm/ucx/peer_failure_detector.h"
#include "comm/ucx/ucx_api.h"
#include "comm/ucx/ucx_settings.h"

namespace xffl::comm::ucx {

class EndpointCache {
 public:
  // Makes no endpoint yet. worker, settings, addresses and failures must outlive it; settings are read
  // when an endpoint is made (peer_failure_detection_on_host, log level).
  EndpointCache(int rank, int world_size, ucp_worker_h worker, const UcxSettings &settings, PeerAddresses &addresses,
                PeerFailureDetector &failures);
  EndpointCache(const EndpointCache &) = delete;
  EndpointCache &operator=(const EndpointCache &) = delete;

  // The endpoint to a global rank; fetches its address (waiting at most until deadline) on first use.
  // Throws XFFL_EPEER (the peer is marked failed) when UCX cannot connect because of the peer, e.g.
  // its shared memory is gone, or when the peer failed earlier or published malformed bytes;
  // XFFL_EBACKEND when UCX itself fails; what the Exchange throws while fetching the address.
  ucp_ep_h endpoint(int peer_rank, Clock::time_point deadline);

  // Whether UCX reaches this peer through shared memory (and CMA for large messages): same host, and
  // its endpoint made without failure detection. False before the endpoint exists.
  bool shares_memory_with(int peer_rank) const;
  // Whether the peer's endpoint was made with error handling (UCP_ERR_HANDLING_MODE_PEER): only those
  // track their requests, so UCX completes the sends outstanding to them when the endpoint is
  // force-closed. True before an endpoint was made.
  bool tracks_requests(int peer_rank) const;

  // Closes the peer's endpoint, forced (UCX releases outstanding operations at once, without the
  // peer) or flushing. Returns UCX's close request while it is in flight (the caller progresses the
  // worker until it completes, then frees it), else nullptr, also when there was no endpoint.
  void *close(int peer_rank, bool force);
  // Closes every endpoint: forced for failed peers, those on this host whose process has exited and
  // those a wait timed out on (a flush to them could only fail), flushing for the others so that the
  // last messages of the last collective still arrive. Returns the close requests still in flight.
  std::vector<void *> close_all();

 private:
  struct Peer {
    ucp_ep_h endpoint = nullptr;
    bool error_handling = true;  // UCP_ERR_HANDLING_MODE_PEER; valid while or after endpoint is set
  };
  void log(xffl_log_level_t level, const std::string &text) const;

  int rank_;
  ucp_worker_h worker_;
  const UcxSettings &settings_;
  PeerAddresses &addresses_;
  PeerFailureDetector &failures_;
  std::vector<Peer> peers_;
};

}  // namespace xffl::comm::ucx

#endif
