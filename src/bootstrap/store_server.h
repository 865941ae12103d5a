// Rank 0's store server: one thread running a poll() event loop over non-blocking sockets, with the
// protocol in StoreCore.
//
// Why one poll loop rather than a thread per connection: the server's resources stay bounded no matter
// how many strangers connect (one thread, bounded buffers per connection, a connection limit); a
// parked fetch or barrier is a record, not a blocked thread; deadlines (hellos, parked requests) are
// handled in one place; and no connection can block the others, since every socket is non-blocking.
// The store's load (a few small messages per rank during bring-up) is far below what one thread serves.
#ifndef XFFL_SRC_BOOTSTRAP_STORE_SERVER_H
#define XFFL_SRC_BOOTSTRAP_STORE_SERVER_H

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bootstrap/socket.h"
#include "bootstrap/store_core.h"
#include "bootstrap/wire.h"

namespace xffl::bootstrap {

class StoreServer {
 public:
  // Resolves bind_host (a name's lookup bounded by lookup_timeout: the job's XFFL_TIMEOUT), binds
  // host:port (port 0: the kernel picks one, see port()), listens and starts the loop. config.address
  // is set to advertised_host:<bound port> (advertised_host defaults to bind_host): the name clients
  // use, for messages. Throws xffl::Error(XFFL_ENETWORK) with the address and the system's reason when
  // it cannot listen, XFFL_ETIMEOUT when the lookup of bind_host does not finish in time.
  StoreServer(ServerConfig config, const std::string &bind_host, int port, std::chrono::milliseconds lookup_timeout,
              wire::Tap tap = {}, const std::string &advertised_host = "");
  // stop().
  ~StoreServer();
  StoreServer(const StoreServer &) = delete;
  StoreServer &operator=(const StoreServer &) = delete;

  int port() const { return port_; }
  const std::string &address() const { return address_; }

  // Waits until no joined rank is connected, at most timeout_ms; true if none is.
  bool wait_until_no_ranks(int timeout_ms);
  // Closes every connection and the listener now and joins the loop thread. Idempotent; not to be
  // called from two threads at once.
  void stop();

  // Thread-safe snapshots for tests and diagnostics.
  std::vector<std::string> rejections() const;
  std::vector<std::string> drops() const;
  size_t connection_count() const;

 private:
  using Clock = StoreCore::Clock;
  using ConnectionId = StoreCore::ConnectionId;

  void run();
  void serve_once();
  void accept_new(Clock::time_point now);
  void read_from(ConnectionId id, short revents, Clock::time_point now);
  void flush(ConnectionId id);
  void close_connection(ConnectionId id, Clock::time_point now);
  void settle(Clock::time_point now);

  wire::Tap tap_;
  net::Fd listener_;
  net::Fd wake_read_, wake_write_;
  int port_ = 0;
  std::string address_;

  mutable std::mutex mutex_;  // guards core_ between the loop and the observers
  std::condition_variable changed_;
  std::unique_ptr<StoreCore> core_;
  std::map<ConnectionId, net::Fd> sockets_;         // loop thread only
  std::map<ConnectionId, Clock::time_point> closing_since_;  // loop thread only
  ConnectionId next_id_ = 1;
  std::atomic<bool> stopping_{false};
  bool stopped_ = false;
  std::thread thread_;
};

}  // namespace xffl::bootstrap

#endif
