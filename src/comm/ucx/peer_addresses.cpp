#include "comm/ucx/peer_addresses.h"

#include <utility>

#include "common/error.h"

namespace xffl::comm::ucx {

PeerAddresses::PeerAddresses(int rank, int world_size, Exchange &exchange, bool crossing)
    : rank_(rank), crossing_(crossing), exchange_(exchange), host_(host_identity()), process_(this_process()),
      peers_(static_cast<size_t>(world_size)) {}

void PeerAddresses::publish(const void *worker_address, size_t length) {
  exchange_.publish(address_key(rank_, crossing_), encode_address(host_, process_, worker_address, length));
}

const PublishedAddress &PeerAddresses::look_up(int peer_rank, Clock::time_point deadline) {
  Peer &peer = peers_.at(static_cast<size_t>(peer_rank));
  if (peer.looked_up) return peer.published;
  const std::string key = address_key(peer_rank, crossing_);
  PublishedAddress published = decode_address(exchange_.fetch(key, remaining_ms(deadline)));
  if (published.worker_address.empty())
    fail(XFFL_EPEER, "rank ", rank_, ": the address rank ", peer_rank, " published under ", key, " is malformed");
  peer.published = std::move(published);
  peer.looked_up = true;
  return peer.published;
}

// This rank's own entry too: whether a group's members share a host is decided from the published
// entries alone (ucx_communicator.cpp), the same bytes on every member.
void PeerAddresses::look_up_all(Clock::time_point deadline) {
  for (size_t peer = 0; peer < peers_.size(); ++peer) look_up(static_cast<int>(peer), deadline);
}

const PublishedAddress *PeerAddresses::known(int peer_rank) const {
  const Peer &peer = peers_.at(static_cast<size_t>(peer_rank));
  return peer.looked_up ? &peer.published : nullptr;
}

}  // namespace xffl::comm::ucx
