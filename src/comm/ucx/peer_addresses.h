// The published addresses (ucx_address.h) of this rank and its peers: publishes this rank's once, and
// fetches a peer's through the Exchange on first need, then keeps it (a rank publishes once, so a
// fetched address never goes stale). The endpoints are made from them (endpoint_cache.h) and the
// failure detector compares their hosts and processes with this one's (peer_failure_detector.h).
//
// Not thread-safe: one thread drives the worker that owns it.
#ifndef XFFL_SRC_COMM_UCX_PEER_ADDRESSES_H
#define XFFL_SRC_COMM_UCX_PEER_ADDRESSES_H

#include <cstddef>
#include <string>
#include <vector>

#include "comm/exchange.h"
#include "comm/ucx/deadline.h"
#include "comm/ucx/process_identity.h"
#include "comm/ucx/ucx_address.h"

namespace xffl::comm::ucx {

class PeerAddresses {
 public:
  // Takes this rank's host and process identity; publishes nothing yet. The Exchange must outlive it.
  // crossing: the keys of a crossing backend's worker (address_key).
  PeerAddresses(int rank, int world_size, Exchange &exchange, bool crossing = false);

  // This rank's host identity and process, as it publishes them.
  const std::string &host() const { return host_; }
  const ProcessIdentity &process() const { return process_; }

  // Publishes this rank's address, with this UCX worker address, under its address_key. Throws
  // what Exchange::publish throws.
  void publish(const void *worker_address, size_t length);

  // A peer's address, fetched (waiting at most until deadline) on first use. Throws what
  // Exchange::fetch throws (XFFL_ETIMEOUT naming the key), or XFFL_EPEER when the peer's bytes are
  // malformed (ucx_address.h), and std::out_of_range for a rank outside the job.
  const PublishedAddress &look_up(int peer_rank, Clock::time_point deadline);
  // Fetches every rank's address not known yet, this one's included (the job's address table, with each rank's host and
  // process), waiting at most until deadline. Called once every rank has published (the set_global
  // barrier): from then on endpoints and liveness checks need no store. Throws like look_up.
  void look_up_all(Clock::time_point deadline);
  // A peer's address when look_up has fetched it already, else nullptr; never fetches.
  const PublishedAddress *known(int peer_rank) const;

 private:
  struct Peer {
    bool looked_up = false;  // published is valid
    PublishedAddress published;
  };

  int rank_;
  bool crossing_;
  Exchange &exchange_;
  std::string host_;
  ProcessIdentity process_;
  std::vector<Peer> peers_;
};

}  // namespace xffl::comm::ucx

#endif
