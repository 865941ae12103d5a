// The cross-facility transport's meeting point, one per backend: the listening socket whose address
// is published in the job's store ("xffl/wan/addr/<rank>"), the dialling of a peer's streams and the
// handshake that authenticates each connection with the job's secret.
//
// Who dials: the lower global rank of a pair, unless the higher one does not listen: a dial-out rank
// (XFFL_WAN_DIAL_OUT, publishes kDialOutOnly) or a rank behind a relay (XFFL_WAN_RELAY, publishes
// kViaRelay + the relay's address) dials a peer that listens itself. When neither listens, they meet
// at a relay (route()): the relay of the one that has one, or of the higher rank when both have one;
// the other (the caller) dials that relay, and its owner dials it too. Two dial-out ranks without a
// relay cannot meet (XFFL_EINVAL).
//
// Handshake (per TCP stream, dialer as above):
//   dialer   -> acceptor: hello = magic | from | to | group tag | group serial | stream | streams |
//                         encryption | 32-byte random nonce
//   acceptor -> dialer:   status | 32-byte random nonce | HMAC(secret, "xffl-wan/1 acceptor" | hello | nonce)
//   dialer   -> acceptor: HMAC(secret, "xffl-wan/1 dialer" | hello | nonce)
// Both proofs are checked in constant time; a wrong one is XFFL_EAUTH. The two nonces make each
// connection's keys (wan_crypto.h) fresh. Every step is bounded by the timeout.
//
// Through a relay (relay_hello.h), each side sends its pairing hello, and once the relay answers
// "paired" the caller runs the dialer's part of the handshake above and the owner the acceptor's,
// end to end through the relay, unchanged. Relayed connections never block their maker: they are
// advanced, like accepting, by every wait (advance()), and claimed like accepted ones. Why: a caller
// that blocked as dial() does would wait until its owner posts to it in this very group (only then
// does the owner dial the relay), and in a ring of three relayed members each blocked caller can wait
// on the next, a cycle; made by every wait, a relayed stream needs only that both ranks wait somewhere.
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

#include <poll.h>

#include "bootstrap/socket.h"
#include "comm/exchange.h"
#include "comm/wan/relay_hello.h"
#include "comm/wan/wan_crypto.h"
#include "comm/wan/wan_settings.h"

namespace xffl::comm::wan {

using Clock = std::chrono::steady_clock;

// Which group a connection belongs to: GroupSpec's tag and serial.
struct Hello;  // the wan handshake's hello (wan_hub.cpp)

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
  std::string relay;                    // "host:port" of the relay it runs through; empty: direct
};

// How this rank reaches a peer (WanHub::route).
struct Route {
  enum Kind {
    kAccept,       // the peer dials this rank's listener
    kDial,         // this rank dials the peer's listener at `address`
    kRelayCaller,  // both dial the relay at `address` (the peer's); this rank speaks first
    kRelayOwner,   // both dial the relay at `address` (this rank's); this rank answers
  };
  Kind kind = kAccept;
  std::string address;
};

class WanHub {
 public:
  // Listens and publishes the address (unless settings.publish_lazily). Throws xffl::Error:
  // XFFL_ENETWORK when no socket can listen, and whatever Exchange::publish throws.
  WanHub(const WanSettings &settings, std::shared_ptr<Exchange> exchange);
  ~WanHub();
  // Publishes the address once (later calls do nothing). Throws what Exchange::publish throws.
  void publish_address();
  // Runs settings.wait_hook's check, if any (comm/crossing_wait_hook.h); what it throws ends the wait.
  void poll_wait_hook() const {
    if (settings_.wait_hook) settings_.wait_hook->poll();
  }

  WanSettings &settings() { return settings_; }
  const WanSettings &settings() const { return settings_; }
  // -1 for a rank that does not listen (poll() skips it).
  int listen_fd() const { return listener_.get(); }
  // "ip:port", kDialOutOnly or kViaRelay + the relay's "host:port".
  const std::string &address() const { return address_; }

  // How this rank reaches peer (see the top of this file). The peer's entry is fetched (waiting for it
  // until deadline) only when this rank may dial. Throws XFFL_EINVAL when both dial out only without a
  // relay, naming both, and what Exchange::fetch throws.
  Route route(int peer, const std::string &what, Clock::time_point deadline);
  // Starts the streams of a kRelayCaller or kRelayOwner route: connects to the relay and sends each
  // stream's pairing hello, without waiting for the pair; advance() goes on, claim() gives them.
  // Throws XFFL_ENETWORK or XFFL_EPEER naming the relay when it cannot be reached, XFFL_ETIMEOUT.
  void start_relayed(int peer, const Route &route, const GroupKey &group, const std::string &what,
                     Clock::time_point deadline);
  // The sockets of relayed streams still being made, to poll for reading (their revents: advance()).
  void add_relayed_fds(std::vector<pollfd> *fds) const;
  // Advances every relayed stream being made by what has come, without waiting for more.
  void advance();
  // What a wait for peer's streams of group still awaits from a relay ("" when none): for messages.
  std::string relay_awaited(const GroupKey &group, int peer) const;
  // Dials every stream of peer at `address` (route()'s kDial) for group: the streams in index order.
  // `what` names the group for messages. Throws XFFL_ETIMEOUT, XFFL_EPEER, XFFL_EAUTH, XFFL_EINVAL (the
  // peer runs other settings), XFFL_ENETWORK.
  std::vector<Connection> dial(int peer, const std::string &address, const GroupKey &group, const std::string &what,
                               Clock::time_point deadline);
  // Accepts and authenticates every connection waiting on the listener, without waiting for new ones.
  void accept_pending(Clock::time_point deadline);
  // The accepted (or relayed) stream `stream` from peer for group, if it came. Throws XFFL_EAUTH when
  // that peer's connection for it failed authentication, and a relayed stream's failure (XFFL_ETIMEOUT
  // when the relay did not pair it by its deadline, naming the relay).
  std::optional<Connection> claim(const GroupKey &group, int peer, int stream);
  // Forgets what was accepted for a group that is gone.
  void forget(const GroupKey &group);

 private:
  struct Relayed;
  using Slot = std::tuple<GroupKey, int, int>;  // group, peer, stream
  void accept_one(bootstrap::net::Fd fd, Clock::time_point deadline);
  // The stream socket's buffers from the BDP (before connect, or on the listener before listen).
  void size_buffers(int fd) const;
  // A connected non-blocking TCP socket to "host:port" by deadline; `where` prefixes messages.
  bootstrap::net::Fd connect_to(const std::string &text, const std::string &where, Clock::time_point deadline) const;
  // The ciphers of a connection (with encryption) from both handshake nonces.
  void add_ciphers(Connection *connection, const GroupKey &group, int peer, int stream,
                   const HandshakeNonce &dialer, const HandshakeNonce &acceptor) const;
  // One step of a relayed stream; false when it is done (claimable) or failed (refused_).
  bool step(const Slot &slot, Relayed &relayed);
  // The wan handshake's pieces, shared by direct and relayed streams.
  Hello new_hello(int peer, const GroupKey &group, int stream) const;
  // The acceptor's nonce from its reply to hello_bytes; throws as dial() does (where: prefix, text:
  // the address dialled).
  HandshakeNonce check_reply(const uint8_t *reply, const uint8_t *hello_bytes, const std::string &where,
                             const std::string &text) const;
  uint32_t hello_status(const Hello &hello) const;
  std::string other_settings_text(const Hello &hello) const;
  void refuse(const GroupKey &group, int peer, xffl_status_t status, std::string why);

  WanSettings settings_;
  std::shared_ptr<Exchange> exchange_;
  bootstrap::net::Fd listener_;
  std::string address_;  // "ip:port"
  bool published_ = false;
  std::map<Slot, Connection> accepted_;
  std::map<Slot, std::unique_ptr<Relayed>> relayed_;  // relayed streams being made
  struct Refusal {
    xffl_status_t status = XFFL_EAUTH;
    std::string why;  // the message after "rank R: wan: "
  };
  std::map<std::pair<GroupKey, int>, Refusal> refused_;  // why a peer's connection failed
};

}  // namespace xffl::comm::wan

#endif
