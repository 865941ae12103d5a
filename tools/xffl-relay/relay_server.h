// The relay's event loop: one thread, non-blocking sockets and epoll (level-triggered). A connection
// first sends its pairing hello (comm/wan/relay_hello.h) within the hello timeout (a silent or slow
// client, a slow loris, is dropped then); a well-formed one waits for the other side of its key up to
// the pair timeout, then both get "paired" and the relay forwards bytes both ways, never looking at
// them: the wan handshake and its encryption run end to end, and the relay holds no secret.
//
// Memory per pair is bounded: each direction has one buffer of `buffer_bytes`, and the relay reads a
// side only while the buffer towards the other side has room (flow control by not reading: TCP then
// holds the sender back). A side that closes (FIN) has what it sent delivered, then the other side is
// shut for writing; a side that resets, or fails, has what it sent delivered, then the other side is
// closed; a pair one of whose sides is gone is closed after kLingerSeconds at most. Anything else a
// client does (garbage, a duplicate, bytes before pairing) ends that connection only.
#ifndef XFFL_TOOLS_XFFL_RELAY_RELAY_SERVER_H
#define XFFL_TOOLS_XFFL_RELAY_RELAY_SERVER_H

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bootstrap/socket.h"
#include "comm/wan/relay_hello.h"

namespace xffl::relay {

using Clock = std::chrono::steady_clock;

enum class Level { kError = 0, kWarn = 1, kInfo = 2, kDebug = 3 };

struct RelayOptions {
  std::string host = "127.0.0.1";
  int port = 0;
  double hello_seconds = 10;    // a connection's hello must be whole by then
  double pair_seconds = 600;    // an unpaired connection is dropped then
  size_t buffer_bytes = size_t{1} << 20;  // per direction of a pair
  size_t max_connections = 4096;
  Level level = Level::kInfo;
};

struct RelayTotals {
  uint64_t pairs = 0;
  uint64_t bytes = 0;    // forwarded, both directions
  uint64_t dropped = 0;  // connections dropped before pairing (garbage, timeouts, duplicates)
};

class RelayServer {
 public:
  // Binds and listens. Throws xffl::Error (XFFL_ENETWORK) when it cannot.
  explicit RelayServer(const RelayOptions &options);
  ~RelayServer();
  RelayServer(const RelayServer &) = delete;
  RelayServer &operator=(const RelayServer &) = delete;

  // "host:port" it listens on.
  const std::string &address() const { return address_; }
  // Serves until a byte is readable on stop_fd (a signalfd, or a pipe), then closes everything.
  void run(int stop_fd);
  const RelayTotals &totals() const { return totals_; }

 private:
  struct Direction;
  struct Conn;
  using Id = uint64_t;

  void log(Level level, const std::string &text) const;
  void accept_all();
  void on_event(Id id, uint32_t events);
  void read_hello(Conn &conn);
  void place(Conn &conn);
  void pump(Conn &conn);
  // Moves bytes from `from` to `to` while both can; the direction's end and the pair's close follow.
  void move(Conn &from, Conn &to, Direction &d);
  void watch(Conn &conn);  // sets its epoll interest from its state
  // Ends a connection that is not paired; `tell` (unless kPaired) is answered first.
  void drop(Conn &conn, const std::string &why, comm::wan::RelayStatus tell);
  void close_pair(Conn &conn, const std::string &why);
  void sweep();  // hello and pair deadlines, lingering pairs
  std::string pair_name(const Conn &conn) const;

  RelayOptions options_;
  bootstrap::net::Fd listener_, epoll_;
  std::string address_;
  Id next_id_ = 1;
  std::map<Id, std::unique_ptr<Conn>> conns_;
  // Connections waiting for their other side, by pairing key and side.
  using Key = decltype(comm::wan::RelayHello().key());
  std::map<std::pair<Key, comm::wan::RelaySide>, Id> waiting_;
  RelayTotals totals_;
  bool listener_paused_ = false;  // out of epoll after EMFILE, until the next sweep
};

}  // namespace xffl::relay

#endif
