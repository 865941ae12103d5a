#include "relay_server.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>

#include "common/error.h"

namespace xffl::relay {

namespace net = bootstrap::net;
using comm::wan::RelayHello;
using comm::wan::RelaySide;
using comm::wan::RelayStatus;

namespace {

// How long a pair one of whose sides is gone may keep the other (the library closes its end when it
// reads the end of the stream; one that does not is cut off then).
constexpr double kLingerSeconds = 60;
// Reads and writes of one event before the loop serves the others (fairness between pairs).
constexpr int kRoundsPerEvent = 16;
// The lookup of a --listen host given by name (glibc's resolver could wait 30 s for a silent DNS server).
constexpr int kLookupTimeoutMs = 10000;

Clock::time_point after(double seconds) {
  return Clock::now() + std::chrono::microseconds(static_cast<long long>(seconds * 1e6));
}

std::string hex(const uint8_t *data, size_t size) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < size; ++i) {
    out += digits[data[i] >> 4];
    out += digits[data[i] & 15];
  }
  return out;
}

}  // namespace

// One direction of a pair: bytes read from one side, not yet written to the other.
struct RelayServer::Direction {
  std::vector<uint8_t> buffer;  // allocated at pairing
  size_t begin = 0, end = 0;    // the bytes held: [begin, end)
  uint64_t moved = 0;           // written to the other side
  bool source_done = false;     // its source ended (FIN, reset or error): no more reads
  bool dead = false;            // its destination is gone: what comes is discarded
  bool shut = false;            // the destination was shut for writing after the last byte
  bool finished() const { return dead || shut; }
};

struct RelayServer::Conn {
  enum State { kHello, kWaiting, kSpliced } state = kHello;
  Id id = 0;
  net::Fd fd;
  std::string from;  // "ip:port" of the client
  std::array<uint8_t, comm::wan::kRelayHelloBytes> hello_bytes{};
  size_t got = 0;
  RelayHello hello;
  Clock::time_point deadline;  // of the hello, of the pairing, or of a lingering pair
  Clock::time_point paired_at;
  Id other = 0;
  Direction out;  // from this side to the other
  uint32_t interest = 0;
  bool lingering = false;  // one direction of its pair is over: deadline is the pair's end
  bool retired = false;    // nothing more to read from it or write to it: out of epoll
};

RelayServer::RelayServer(const RelayOptions &options) : options_(options) {
  const net::Resolved resolved =
      net::resolve(options_.host, options_.port, true, Clock::now() + std::chrono::milliseconds(kLookupTimeoutMs));
  if (resolved.kind == net::Resolved::Timeout)
    fail(XFFL_ETIMEOUT, "xffl-relay: cannot listen on ", options_.host, ":", options_.port, ": ",
         net::lookup_timeout_text(options_.host, kLookupTimeoutMs, ""));
  if (resolved.kind != net::Resolved::Ok)
    fail(XFFL_EINVAL, "xffl-relay: cannot resolve '", options_.host, "': ", resolved.error);
  const net::Address &address = resolved.addresses[0];
  listener_ = net::Fd(::socket(address.storage.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!listener_) fail(XFFL_ENETWORK, "xffl-relay: socket: ", net::errno_text(errno));
  int on = 1;
  ::setsockopt(listener_.get(), SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  if (::bind(listener_.get(), reinterpret_cast<const sockaddr *>(&address.storage), address.length) != 0 ||
      ::listen(listener_.get(), 1024) != 0)
    fail(XFFL_ENETWORK, "xffl-relay: cannot listen on ", options_.host, ":", options_.port, ": ",
         net::errno_text(errno));
  const std::string host = address.text.substr(0, address.text.rfind(':'));
  address_ = host + ":" + std::to_string(net::local_port(listener_.get()));
  epoll_ = net::Fd(::epoll_create1(EPOLL_CLOEXEC));
  if (!epoll_) fail(XFFL_ENETWORK, "xffl-relay: epoll_create1: ", net::errno_text(errno));
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.u64 = 0;  // the listener
  ::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, listener_.get(), &event);
}

RelayServer::~RelayServer() = default;

void RelayServer::log(Level level, const std::string &text) const {
  if (level > options_.level) return;
  static const char *names[] = {"error", "warn", "info", "debug"};
  char when[32];
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &utc);
  std::fprintf(stderr, "%s xffl-relay [%s] %s\n", when, names[static_cast<int>(level)], text.c_str());
  std::fflush(stderr);
}

std::string RelayServer::pair_name(const Conn &conn) const {
  const RelayHello &h = conn.hello;
  return "job " + hex(h.job.data(), 4) + " group " + std::to_string(h.tag) + "/" + std::to_string(h.serial) +
         " rank " + std::to_string(h.caller) + " -> rank " + std::to_string(h.owner) + " stream " +
         std::to_string(h.stream) + "/" + std::to_string(h.streams);
}

void RelayServer::run(int stop_fd) {
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.u64 = ~uint64_t{0};  // the stop signal
  ::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, stop_fd, &event);
  std::vector<epoll_event> events(256);
  Clock::time_point next_sweep = Clock::now();
  for (;;) {
    // Deadlines are seconds long: a sweep every 100 ms is precise enough and costs nothing.
    const int ready = ::epoll_wait(epoll_.get(), events.data(), static_cast<int>(events.size()), 100);
    if (ready < 0 && errno != EINTR) fail(XFFL_ENETWORK, "xffl-relay: epoll_wait: ", net::errno_text(errno));
    for (int i = 0; i < ready; ++i) {
      const uint64_t id = events[static_cast<size_t>(i)].data.u64;
      if (id == ~uint64_t{0}) {
        log(Level::kInfo, "stopping: closing " + std::to_string(conns_.size()) + " connection(s)");
        conns_.clear();
        waiting_.clear();
        return;
      }
      if (id == 0) {
        accept_all();
        continue;
      }
      on_event(id, events[static_cast<size_t>(i)].events);
    }
    if (Clock::now() >= next_sweep) {
      sweep();
      next_sweep = Clock::now() + std::chrono::milliseconds(100);
    }
  }
}

void RelayServer::accept_all() {
  for (;;) {
    net::Fd fd(::accept4(listener_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (!fd) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno == EMFILE || errno == ENFILE) {
        // Out of descriptors: the listener would stay readable and spin the loop; the sweep takes it
        // back in 100 ms (connections ending in the meantime give descriptors back).
        ::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, listener_.get(), nullptr);
        listener_paused_ = true;
      }
      if (errno != EAGAIN && errno != EWOULDBLOCK) log(Level::kWarn, "accept: " + net::errno_text(errno));
      return;
    }
    int on = 1;
    ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    ::setsockopt(fd.get(), SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
    const std::string from = net::peer_name(fd.get());
    if (conns_.size() >= options_.max_connections) {
      const auto reply = comm::wan::encode_relay_reply(RelayStatus::kFull, 0);
      (void)::send(fd.get(), reply.data(), reply.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
      log(Level::kWarn, "refused a connection from " + from + ": " + std::to_string(conns_.size()) +
                            " connections held (--max-connections)");
      ++totals_.dropped;
      continue;
    }
    auto conn = std::make_unique<Conn>();
    conn->id = next_id_++;
    conn->fd = std::move(fd);
    conn->from = from;
    conn->deadline = after(options_.hello_seconds);
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.u64 = conn->id;
    conn->interest = EPOLLIN;
    ::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, conn->fd.get(), &event);
    log(Level::kDebug, "connection from " + from);
    conns_[conn->id] = std::move(conn);
  }
}

void RelayServer::on_event(Id id, uint32_t events) {
  auto found = conns_.find(id);
  if (found == conns_.end()) return;  // closed earlier in this round
  Conn &conn = *found->second;
  switch (conn.state) {
    case Conn::kHello:
      read_hello(conn);
      return;
    case Conn::kWaiting: {
      // Nothing may come before the pair: the end of the connection, or bytes, end it.
      uint8_t byte = 0;
      const ssize_t n = ::recv(conn.fd.get(), &byte, 1, MSG_DONTWAIT | MSG_PEEK);
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) && !(events & (EPOLLERR | EPOLLHUP)))
        return;
      drop(conn, n > 0 ? "sent bytes before it was paired" : "closed before it was paired", RelayStatus::kPaired);
      return;
    }
    case Conn::kSpliced:
      pump(conn);
      return;
  }
}

void RelayServer::read_hello(Conn &conn) {
  while (conn.got < conn.hello_bytes.size()) {
    const ssize_t n =
        ::recv(conn.fd.get(), conn.hello_bytes.data() + conn.got, conn.hello_bytes.size() - conn.got, MSG_DONTWAIT);
    if (n > 0) {
      conn.got += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    drop(conn, n == 0 ? "closed before its hello was whole" : "failed before its hello: " + net::errno_text(errno),
         RelayStatus::kPaired);
    return;
  }
  std::string why;
  const std::optional<RelayHello> hello = comm::wan::decode_relay_hello(conn.hello_bytes.data(), &why);
  if (!hello) {
    drop(conn, "bad hello: " + why, RelayStatus::kPaired);
    return;
  }
  conn.hello = *hello;
  place(conn);
}

void RelayServer::place(Conn &conn) {
  const RelaySide other_side = conn.hello.side == RelaySide::kCaller ? RelaySide::kOwner : RelaySide::kCaller;
  const Key key = conn.hello.key();
  const char *side = conn.hello.side == RelaySide::kCaller ? "caller" : "owner";
  auto match = waiting_.find({key, other_side});
  if (match == waiting_.end()) {
    if (waiting_.count({key, conn.hello.side})) {
      drop(conn, std::string("a ") + side + " of " + pair_name(conn) + " is waiting already (duplicate)",
           RelayStatus::kDuplicate);
      return;
    }
    waiting_[{key, conn.hello.side}] = conn.id;
    conn.state = Conn::kWaiting;
    conn.deadline = after(options_.pair_seconds);
    log(Level::kDebug, std::string("waiting: ") + pair_name(conn) + " (" + side + " " + conn.from + ")");
    return;
  }
  Conn &other = *conns_.at(match->second);
  waiting_.erase(match);
  const auto reply = comm::wan::encode_relay_reply(RelayStatus::kPaired, 0);
  for (Conn *c : {&conn, &other}) {
    c->state = Conn::kSpliced;
    c->other = c == &conn ? other.id : conn.id;
    c->paired_at = Clock::now();
    c->out.buffer.resize(options_.buffer_bytes);
  }
  Conn &caller = conn.hello.side == RelaySide::kCaller ? conn : other;
  Conn &owner = conn.hello.side == RelaySide::kCaller ? other : conn;
  ++totals_.pairs;
  log(Level::kInfo, "paired " + pair_name(conn) + " (caller " + caller.from + ", owner " + owner.from + ")");
  // The reply is 8 bytes on a socket that has sent nothing yet: its buffer takes them at once.
  for (Conn *c : {&caller, &owner}) {
    if (::send(c->fd.get(), reply.data(), reply.size(), MSG_DONTWAIT | MSG_NOSIGNAL) !=
        static_cast<ssize_t>(reply.size())) {
      close_pair(*c, std::string("could not tell ") + (c == &caller ? "the caller" : "the owner") +
                         " it was paired: " + net::errno_text(errno));
      return;
    }
  }
  watch(caller);
  watch(owner);
}

void RelayServer::pump(Conn &conn) {
  Conn &other = *conns_.at(conn.other);
  const Id a = conn.id, b = other.id;
  move(conn, other, conn.out);
  if (!conns_.count(a) || !conns_.count(b)) return;  // the pair closed
  move(other, conn, other.out);
  if (!conns_.count(a) || !conns_.count(b)) return;
  watch(conn);
  watch(other);
}

void RelayServer::move(Conn &from, Conn &to, Direction &d) {
  for (int round = 0; round < kRoundsPerEvent; ++round) {
    bool progress = false;
    if (!d.source_done && d.end < d.buffer.size()) {
      const ssize_t n = ::recv(from.fd.get(), d.buffer.data() + d.end, d.buffer.size() - d.end, MSG_DONTWAIT);
      if (n > 0) {
        d.end += static_cast<size_t>(n);
        progress = true;
      } else if (n == 0) {
        d.source_done = true;  // FIN: deliver what is held, then shut the other side for writing
        log(Level::kDebug, pair_name(from) + ": " + from.from + " closed its end");
      } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        // A reset or failed side: deliver what it sent, then the other side is closed (its own
        // direction can no longer be delivered).
        d.source_done = true;
        to.out.dead = true;
        to.out.begin = to.out.end = 0;
        log(Level::kInfo, pair_name(from) + ": " + from.from + " failed: " + net::errno_text(errno));
      }
    }
    if (d.end > d.begin && !d.dead) {
      const ssize_t n = ::send(to.fd.get(), d.buffer.data() + d.begin, d.end - d.begin, MSG_DONTWAIT | MSG_NOSIGNAL);
      if (n > 0) {
        d.begin += static_cast<size_t>(n);
        d.moved += static_cast<uint64_t>(n);
        totals_.bytes += static_cast<uint64_t>(n);
        progress = true;
        if (d.begin == d.end) d.begin = d.end = 0;
      } else if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        // The destination is gone: nothing more can reach it; its own direction ends with it.
        log(Level::kInfo, pair_name(from) + ": " + to.from + " failed: " + net::errno_text(errno));
        d.dead = true;
        d.begin = d.end = 0;
        to.out.source_done = true;
      }
    }
    if (d.dead) d.begin = d.end = 0;
    // Room at the front again once the back is full: move what is held down (rare: begin is usually 0).
    if (d.end == d.buffer.size() && d.begin > 0) {
      std::memmove(d.buffer.data(), d.buffer.data() + d.begin, d.end - d.begin);
      d.end -= d.begin;
      d.begin = 0;
      progress = true;
    }
    if (!progress) break;
  }
  if (d.source_done && d.begin == d.end && !d.finished()) {
    ::shutdown(to.fd.get(), SHUT_WR);
    d.shut = true;
  }
  if (from.out.finished() != to.out.finished() && !from.lingering) {
    // One direction over: the other has kLingerSeconds to end (the library closes on the end of stream).
    from.lingering = to.lingering = true;
    from.deadline = to.deadline = after(kLingerSeconds);
  }
  if (from.out.finished() && to.out.finished()) {
    const bool clean = from.out.shut && to.out.shut;
    close_pair(from, clean ? "both ends closed" : "one end failed; the other was closed");
  }
}

void RelayServer::watch(Conn &conn) {
  if (conn.state != Conn::kSpliced) return;
  const Conn &other = *conns_.at(conn.other);
  if (conn.retired) return;
  if (conn.out.source_done && other.out.finished()) {
    // Out of epoll, or a reset socket's EPOLLERR, which no interest masks, would wake the loop
    // until the other side has taken what this one sent.
    ::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, conn.fd.get(), nullptr);
    conn.retired = true;
    return;
  }
  uint32_t interest = 0;
  if (!conn.out.source_done && conn.out.end < conn.out.buffer.size()) interest |= EPOLLIN;  // room to read into
  if (other.out.end > other.out.begin && !other.out.dead) interest |= EPOLLOUT;            // bytes to write
  if (interest == conn.interest) return;
  epoll_event event{};
  event.events = interest;
  event.data.u64 = conn.id;
  ::epoll_ctl(epoll_.get(), EPOLL_CTL_MOD, conn.fd.get(), &event);
  conn.interest = interest;
}

void RelayServer::drop(Conn &conn, const std::string &why, RelayStatus tell) {
  if (tell != RelayStatus::kPaired) {
    const uint32_t seconds = tell == RelayStatus::kUnpaired ? static_cast<uint32_t>(options_.pair_seconds) : 0;
    const auto reply = comm::wan::encode_relay_reply(tell, seconds);
    (void)::send(conn.fd.get(), reply.data(), reply.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
  }
  const bool known = conn.state == Conn::kWaiting;
  log(known ? Level::kInfo : Level::kWarn,
      "dropped the connection from " + conn.from + (known ? " (" + pair_name(conn) + ")" : std::string()) + ": " + why);
  if (known) waiting_.erase({conn.hello.key(), conn.hello.side});
  ++totals_.dropped;
  conns_.erase(conn.id);  // closes it (epoll forgets a closed descriptor)
}

void RelayServer::close_pair(Conn &conn, const std::string &why) {
  auto found = conns_.find(conn.other);
  Conn *other = found == conns_.end() ? nullptr : found->second.get();
  Conn &caller = conn.hello.side == RelaySide::kCaller || !other ? conn : *other;
  Conn &owner = &caller == &conn && other ? *other : conn;
  const double seconds = std::chrono::duration<double>(Clock::now() - conn.paired_at).count();
  char took[32];
  std::snprintf(took, sizeof took, "%.3f", seconds);
  log(Level::kInfo, "closed " + pair_name(conn) + " after " + took + " s: " + std::to_string(caller.out.moved) +
                        " bytes caller -> owner, " + std::to_string(owner.out.moved) + " bytes owner -> caller (" +
                        why + ")");
  const Id a = conn.id, b = conn.other;
  conns_.erase(a);
  conns_.erase(b);
}

void RelayServer::sweep() {
  const Clock::time_point now = Clock::now();
  if (listener_paused_) {
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.u64 = 0;
    ::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, listener_.get(), &event);
    listener_paused_ = false;
  }
  std::vector<Id> due;
  for (const auto &[id, conn] : conns_)
    if (now >= conn->deadline && (conn->state != Conn::kSpliced || conn->lingering))
      due.push_back(id);
  for (Id id : due) {
    auto found = conns_.find(id);
    if (found == conns_.end()) continue;
    Conn &conn = *found->second;
    char seconds[32];
    if (conn.state == Conn::kHello) {
      std::snprintf(seconds, sizeof seconds, "%g", options_.hello_seconds);
      drop(conn, std::string("no whole hello within ") + seconds + " s (--hello-timeout)", RelayStatus::kPaired);
    } else if (conn.state == Conn::kWaiting) {
      std::snprintf(seconds, sizeof seconds, "%g", options_.pair_seconds);
      drop(conn, std::string("its other side did not come within ") + seconds + " s (--pair-timeout)",
           RelayStatus::kUnpaired);
    } else {
      close_pair(conn, "one end stayed open " + std::to_string(static_cast<int>(kLingerSeconds)) +
                           " s after the other had ended");
    }
  }
}

}  // namespace xffl::relay
