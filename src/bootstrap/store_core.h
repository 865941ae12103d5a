// The store server's logic without sockets: connection state machines, the key-value map, parked
// fetches and barriers. The transport (store_server.cpp) reports bytes, disconnections and the time;
// the core answers with bytes to send and what to do with each connection. Keeping sockets out makes
// the protocol fuzzable byte by byte and testable without timing.
//
// Bounds that keep a stranger from harming the job:
//   - a connection that has not finished its hello (and authentication) by hello_timeout_ms is dropped;
//   - a frame beyond wire::kMaxPayload, bad magic/version/type or a malformed payload drops it at once;
//   - one request at a time per connection: while a fetch or barrier is parked, or while unsent output
//     exceeds one frame, the core stops asking for that connection's bytes (back-pressure);
//   - at most max_connections connections, and at most max_stored_bytes of keys and values.
#ifndef XFFL_SRC_BOOTSTRAP_STORE_CORE_H
#define XFFL_SRC_BOOTSTRAP_STORE_CORE_H

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/log.h"
#include "bootstrap/group_registry.h"
#include "bootstrap/protocol.h"

namespace xffl::bootstrap {

struct ServerConfig {
  int world_size = 1;
  std::string job_id = "xffl";
  std::string auth_token;    // empty: no authentication
  std::string address;       // "host:port" as clients see it, for messages
  int hello_timeout_ms = 10000;
  size_t max_connections = 0;               // 0: 4 * world_size + 64
  size_t max_stored_bytes = size_t{256} << 20;
  // Slots of the process-group registry (group_registry.h); tests make it small.
  uint32_t group_slots = GroupRegistry::kDefaultSlots;
  Logger logger;
  // Where nonces come from; empty means OpenSSL's RAND_bytes. Tests and the fuzzer make it fixed.
  std::function<protocol::Nonce()> nonce_source;
};

class StoreCore {
 public:
  using Clock = std::chrono::steady_clock;
  using ConnectionId = uint64_t;
  enum class Disposition { Keep, CloseAfterFlush, CloseNow };

  explicit StoreCore(ServerConfig config);
  ~StoreCore();
  StoreCore(const StoreCore &) = delete;
  StoreCore &operator=(const StoreCore &) = delete;

  // --- events from the transport -------------------------------------------------------------
  // A new connection; false when over max_connections (the transport closes it at once).
  bool accept(ConnectionId id, const std::string &peer, Clock::time_point now);
  void receive(ConnectionId id, const uint8_t *data, size_t size, Clock::time_point now);
  // The peer went away or the transport closed the connection; forgets it.
  void disconnected(ConnectionId id, Clock::time_point now);
  // Expires hello deadlines and parked requests whose time has come.
  void expire(Clock::time_point now);

  // --- what the transport should do ----------------------------------------------------------
  // Unsent bytes of a connection (nullptr/0 when none); sent() drops the first n of them.
  const uint8_t *pending_output(ConnectionId id, size_t *size) const;
  void sent(ConnectionId id, size_t n);
  bool wants_read(ConnectionId id) const;
  Disposition disposition(ConnectionId id) const;
  std::optional<Clock::time_point> next_deadline() const;

  // --- observation (tests, linger on close) ------------------------------------------------
  size_t connection_count() const { return connections_.size(); }
  size_t joined_connection_count() const;
  // Why connections were refused (job mismatch, wrong token, duplicate rank); the last 64.
  const std::vector<std::string> &rejections() const { return rejections_; }
  // Why connections were dropped (protocol errors, hello deadline); the last 64.
  const std::vector<std::string> &drops() const { return drops_; }
  const GroupRegistry &groups() const { return groups_; }

 private:
  struct Connection;
  struct Parked;
  struct BarrierState {
    std::set<int> arrived;
    std::vector<ConnectionId> waiting;
  };
  struct Entry {
    std::vector<uint8_t> value;
    int publisher;
  };

  Connection *find(ConnectionId id);
  const Connection *find(ConnectionId id) const;
  void process(Connection &connection, Clock::time_point now);
  void resume_all(Clock::time_point now);
  void handle(Connection &connection, const wire::Frame &frame, Clock::time_point now);
  void on_hello(Connection &connection, const protocol::Hello &hello);
  void on_auth(Connection &connection, const protocol::Auth &auth);
  void on_publish(Connection &connection, const protocol::Publish &publish);
  void on_fetch(Connection &connection, const protocol::Fetch &fetch, Clock::time_point now);
  void on_barrier(Connection &connection, const protocol::Barrier &barrier, Clock::time_point now);
  void on_departed(Connection &connection);
  void on_claim(Connection &connection, const protocol::Claim &claim);
  void on_release(Connection &connection, const protocol::Release &release);
  void join(Connection &connection, const protocol::Welcome &welcome);
  void reject(Connection &connection, xffl_status_t status, const std::string &reason);
  void drop(Connection &connection, const std::string &reason);
  void send(Connection &connection, const std::vector<uint8_t> &bytes);
  void answer(ConnectionId id, const std::vector<uint8_t> &bytes);
  void fail_barrier(const std::string &name, BarrierState &barrier, xffl_status_t status, const std::string &why,
                    const std::vector<uint32_t> &ranks);
  std::vector<uint32_t> missing_ranks(const BarrierState &barrier) const;
  void remember_failed_barrier(const std::string &name, const protocol::Failure &failure);
  std::string describe(const Connection &connection) const;
  void remember(std::vector<std::string> &log, const std::string &line);

  ServerConfig config_;
  std::map<ConnectionId, std::unique_ptr<Connection>> connections_;
  std::map<std::string, Entry> entries_;
  size_t stored_bytes_ = 0;
  std::map<std::string, std::vector<ConnectionId>> fetch_waiters_;
  std::map<std::string, BarrierState> barriers_;
  std::map<std::string, protocol::Failure> failed_barriers_;  // answered at once to late arrivals
  std::deque<std::string> failed_order_;
  std::set<int> joined_ranks_;    // every rank that ever joined: a second hello for it is refused
  std::set<int> departed_ranks_;  // joined ranks whose connection has closed
  GroupRegistry groups_;
  std::vector<std::string> rejections_;
  std::vector<std::string> drops_;
};

}  // namespace xffl::bootstrap

#endif
