// The cross-facility transport's meeting point, one per backend: the listening socket whose address
// is published in the job's store ("xffl/wan/addr/<rank>"), the dialling of a peer's streams and the
// handshake that authenticates each connection with the job's secret.
//
// Who dials: the lower global rank of a pair, unless the higher one dials out only (XFFL_WAN_DIAL_OUT:
// it never listens and publishes kDialOutOnly); two dial-out ranks cannot meet (XFFL_EINVAL).
//
// Handshake (per TCP stream, dialer as above):
//   dialer   -> acceptor: hello = magic | from | to | group tag | group serial | stream | streams |
//                         encryption | 32-byte random nonce
//   acceptor -> dialer:   status | 32-byte random nonce | HMAC(secret, "xffl-wan/1 acceptor" | hello | nonce)
//   dialer   -> acceptor: HMAC(secret, "xffl-wan/1 dialer" | hello | nonce)
// Both proofs are checked in constant time; a wrong one is XFFL_EAUTH. The two nonces make each
// connection's keys (wan_crypto.h) fresh. Every step is bounded by the timeout.
//
// Accepting is driven by the communicators' waits (one thread drives a backend): a connection for a
// group that has not asked for it yet is kept until it does.
#ifndef XFFL_SRC_COMM_WAN_WAN_HUB_H
#define XFFL_SRC_COMM_WAN_WAN_HUB_H

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "bootstrap/socket.h"
#include "comm/exchange.h"
#include "comm/wan/wan_crypto.h"
#include "comm/wan/wan_settings.h"

namespace xffl::comm::wan {

using Clock = std::chrono::steady_clock;

// Which group a connection belongs to: GroupSpec's tag and serial.
struct GroupKey {
  uint64_t tag = 0;
  uint64_t serial = 0;
  bool operator<(const GroupKey &other) const { return std::tie(tag, serial) < std::tie(other.tag, other.serial); }
};

// One authenticated TCP stream to a peer: non-blocking, with its two ciphers when encrypted.
struct Connection {
  bootstrap::net::Fd fd;
  std::unique_ptr<FrameCipher> sealer;  // frames this rank sends
  std::unique_ptr<FrameCipher> opener;  // frames this rank receives
};

class WanHub {
 public:
  // Listens and publishes the address (unless settings.publish_lazily). Throws xffl::Error:
  // XFFL_ENETWORK when no socket can listen, and whatever Exchange::publish throws.
  WanHub(const WanSettings &settings, std::shared_ptr<Exchange> exchange);
  // Publishes the address once (later calls do nothing). Throws what Exchange::publish throws.
  void publish_address();
  // Runs settings.wait_hook's check, if any (comm/crossing_wait_hook.h); what it throws ends the wait.
  void poll_wait_hook() const {
    if (settings_.wait_hook) settings_.wait_hook->poll();
  }

  WanSettings &settings() { return settings_; }
  const WanSettings &settings() const { return settings_; }
  // -1 for a dial-out rank (poll() skips it).
  int listen_fd() const { return listener_.get(); }
  // "ip:port", or kDialOutOnly.
  const std::string &address() const { return address_; }

  // The address to dial peer at ("ip:port", as it published it) when this rank dials it; nullopt when
  // peer dials this rank. The lower rank dials unless the higher one dials out only; the peer's entry
  // is fetched (waiting for it until deadline) only when this rank may dial. Throws XFFL_EINVAL when
  // both dial out only, naming both, and what Exchange::fetch throws.
  std::optional<std::string> dial_address(int peer, const std::string &what, Clock::time_point deadline);
  // Dials every stream of peer at `address` (dial_address's) for group: the streams in index order.
  // `what` names the group for messages. Throws XFFL_ETIMEOUT, XFFL_EPEER, XFFL_EAUTH, XFFL_EINVAL (the
  // peer runs other settings), XFFL_ENETWORK.
  std::vector<Connection> dial(int peer, const std::string &address, const GroupKey &group, const std::string &what,
                               Clock::time_point deadline);
  // Accepts and authenticates every connection waiting on the listener, without waiting for new ones.
  void accept_pending(Clock::time_point deadline);
  // The accepted stream `stream` from peer for group, if it came. Throws XFFL_EAUTH when that peer's
  // connection for it failed authentication.
  std::optional<Connection> claim(const GroupKey &group, int peer, int stream);
  // Forgets what was accepted for a group that is gone.
  void forget(const GroupKey &group);

 private:
  void accept_one(bootstrap::net::Fd fd, Clock::time_point deadline);
  // The stream socket's buffers from the BDP (before connect, or on the listener before listen).
  void size_buffers(int fd) const;

  WanSettings settings_;
  std::shared_ptr<Exchange> exchange_;
  bootstrap::net::Fd listener_;
  std::string address_;  // "ip:port"
  bool published_ = false;
  using Slot = std::tuple<GroupKey, int, int>;  // group, peer, stream
  std::map<Slot, Connection> accepted_;
  std::map<std::pair<GroupKey, int>, std::string> refused_;  // why a peer's connection was refused
};

}  // namespace xffl::comm::wan

#endif
