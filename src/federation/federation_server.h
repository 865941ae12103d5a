// The built-in federation server (tools/xffl-federation): FederationCore behind a TCP listener, with a
// thread per connection.
//
// Why threads here, where the rendezvous store has one poll loop: a Watch parks its connection until a
// change or its deadline, and a thread waiting on the core's condition variable is the plainest way to
// hold it. Resources stay bounded all the same: at most kMaxConnections connections (more are closed at
// once), a handshake must finish within the handshake timeout, every frame is bounded
// (federation_protocol.h), and the core bounds leases, keys and history.
#ifndef XFFL_SRC_FEDERATION_FEDERATION_SERVER_H
#define XFFL_SRC_FEDERATION_FEDERATION_SERVER_H

#include <array>
#include <atomic>
#include <condition_variable>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "bootstrap/socket.h"
#include "federation/federation_core.h"

namespace xffl::federation {

struct ServerOptions {
  std::string secret;               // the job secret; empty: no authentication
  int handshake_timeout_ms = 10000;  // a connection that has not authenticated by then is closed
  int max_wait_ms = 600000;          // the longest a Watch may park
  int lookup_timeout_ms = 10000;     // the lookup of a host name to listen on (glibc's could take 30 s)
};

class FederationServer {
 public:
  static constexpr size_t kMaxConnections = 256;

  // Binds host:port (port 0: the kernel picks, see port()) and starts serving. Throws
  // xffl::Error(XFFL_ENETWORK) naming the address and the system's reason when it cannot listen, and
  // XFFL_ETIMEOUT when the lookup of a host name does not finish within options.lookup_timeout_ms.
  FederationServer(ServerOptions options, const std::string &host, int port);
  ~FederationServer();  // stop()
  FederationServer(const FederationServer &) = delete;
  FederationServer &operator=(const FederationServer &) = delete;

  int port() const { return port_; }
  const std::string &address() const { return address_; }
  // Closes the listener and every connection, and joins every thread. Idempotent.
  void stop();
  // The requests served so far, by type: "Put 12, List 30, ..." (types never asked are left out); for
  // profiling a client's protocol (xffl-federation --stats, bench/facilities/continue_bench.py).
  std::string request_counts() const;

 private:
  struct Connection {
    bootstrap::net::Fd fd;
    std::thread thread;
    std::atomic<bool> done{false};
  };
  void accept_loop();
  void serve(Connection *connection);
  bool handshake(int fd);
  void reap_finished();

  ServerOptions options_;
  bootstrap::net::Fd listener_;
  int port_ = 0;
  std::string address_;

  std::mutex mutex_;  // guards core_
  std::condition_variable changed_;
  FederationCore core_;

  std::mutex connections_mutex_;
  std::list<std::unique_ptr<Connection>> connections_;
  std::atomic<bool> stopping_{false};
  std::thread acceptor_;
  std::array<std::atomic<uint64_t>, 64> requests_{};  // by request type (< 64)
};

}  // namespace xffl::federation

#endif
