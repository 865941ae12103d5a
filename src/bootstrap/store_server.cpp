#include "bootstrap/store_server.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "bootstrap/text.h"
#include "common/error.h"

namespace xffl::bootstrap {

namespace {
constexpr size_t kReadChunk = 64 * 1024;
constexpr int kMaxPollMs = 1000;
// A connection told to close after its last frame gets this long to take it.
constexpr auto kFlushGrace = std::chrono::milliseconds(1000);
constexpr int kAcceptsPerWake = 64;
}  // namespace

StoreServer::StoreServer(ServerConfig config, const std::string &bind_host, int port,
                         std::chrono::milliseconds lookup_timeout, wire::Tap tap, const std::string &advertised_host)
    : tap_(std::move(tap)) {
  const net::Resolved resolved = net::resolve(bind_host, port, true, Clock::now() + lookup_timeout);
  if (resolved.kind == net::Resolved::Timeout)
    fail(XFFL_ETIMEOUT, "cannot serve the store at ", host_port(bind_host, port), ": ",
         net::lookup_timeout_text(bind_host, lookup_timeout.count()));
  if (resolved.kind != net::Resolved::Ok)
    fail(XFFL_ENETWORK, "cannot serve the store at ", host_port(bind_host, port), ": cannot resolve '", bind_host,
         "': ", resolved.error);
  int last_error = 0;
  std::string tried;
  for (const net::Address &address : resolved.addresses) {
    net::Fd fd(::socket(address.storage.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd) {
      last_error = errno;
      continue;
    }
    int on = 1;
    // A restarted job may reuse the port while the old connections sit in TIME_WAIT.
    ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    if (::bind(fd.get(), reinterpret_cast<const sockaddr *>(&address.storage), address.length) != 0 ||
        ::listen(fd.get(), 512) != 0) {
      last_error = errno;
      tried = address.text;
      continue;
    }
    listener_ = std::move(fd);
    break;
  }
  if (!listener_) {
    std::string hint;
    if (last_error == EADDRINUSE) hint = " (another job or an earlier run holds the port: choose another MASTER_PORT)";
    if (last_error == EADDRNOTAVAIL)
      hint = " ('" + bind_host + "' is not an address of this host: rank 0 must run where MASTER_ADDR points)";
    fail(XFFL_ENETWORK, "cannot serve the store at ", tried.empty() ? host_port(bind_host, port) : tried, ": ",
         net::errno_text(last_error), hint);
  }
  port_ = net::local_port(listener_.get());
  config.address = host_port(advertised_host.empty() ? bind_host : advertised_host, port_);
  address_ = config.address;

  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_NONBLOCK | O_CLOEXEC) != 0)
    fail(XFFL_ENETWORK, "cannot serve the store at ", address_, ": pipe: ", net::errno_text(errno));
  wake_read_ = net::Fd(pipe_fds[0]);
  wake_write_ = net::Fd(pipe_fds[1]);

  core_ = std::make_unique<StoreCore>(std::move(config));
  thread_ = std::thread([this] { run(); });
}

StoreServer::~StoreServer() { stop(); }

void StoreServer::stop() {
  if (stopped_) return;
  stopped_ = true;
  stopping_ = true;
  char byte = 1;
  if (::write(wake_write_.get(), &byte, 1) < 0) {
    // The pipe is full, so the loop is already awake.
  }
  if (thread_.joinable()) thread_.join();
  std::lock_guard<std::mutex> hold(mutex_);
  sockets_.clear();
  listener_.reset();
  changed_.notify_all();
}

bool StoreServer::wait_until_no_ranks(int timeout_ms) {
  std::unique_lock<std::mutex> hold(mutex_);
  return changed_.wait_for(hold, std::chrono::milliseconds(timeout_ms),
                           [this] { return stopping_ || core_->joined_connection_count() == 0; });
}

std::vector<std::string> StoreServer::rejections() const {
  std::lock_guard<std::mutex> hold(mutex_);
  return core_->rejections();
}

std::vector<std::string> StoreServer::drops() const {
  std::lock_guard<std::mutex> hold(mutex_);
  return core_->drops();
}

size_t StoreServer::connection_count() const {
  std::lock_guard<std::mutex> hold(mutex_);
  return core_->connection_count();
}

void StoreServer::run() {
  while (!stopping_) {
    try {
      serve_once();
    } catch (const std::exception &) {
      // Nothing in one round may end the server for everyone (e.g. a failed allocation): go on.
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
}

void StoreServer::serve_once() {
  std::vector<pollfd> entries;
  std::vector<ConnectionId> ids;
  int timeout_ms = kMaxPollMs;
  {
    std::lock_guard<std::mutex> hold(mutex_);
    entries.push_back({wake_read_.get(), POLLIN, 0});
    entries.push_back({listener_.get(), POLLIN, 0});
    for (const auto &[id, fd] : sockets_) {
      short events = POLLRDHUP;
      if (core_->wants_read(id)) events |= POLLIN;
      size_t pending = 0;
      core_->pending_output(id, &pending);
      if (pending) events |= POLLOUT;
      entries.push_back({fd.get(), events, 0});
      ids.push_back(id);
    }
    if (auto deadline = core_->next_deadline()) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - Clock::now()).count() + 1;
      timeout_ms = static_cast<int>(std::max<long long>(0, std::min<long long>(left, kMaxPollMs)));
    }
    if (!closing_since_.empty()) timeout_ms = std::min(timeout_ms, 100);
  }
  int ready = ::poll(entries.data(), entries.size(), timeout_ms);
  if (ready < 0 && errno != EINTR) return;
  if (stopping_) return;

  std::lock_guard<std::mutex> hold(mutex_);
  Clock::time_point now = Clock::now();
  if (entries[0].revents) {
    char drain[64];
    while (::read(wake_read_.get(), drain, sizeof drain) > 0) {
    }
  }
  for (size_t i = 0; i < ids.size(); ++i) {
    short revents = entries[i + 2].revents;
    if (!revents || !sockets_.count(ids[i])) continue;
    if (revents & POLLOUT) flush(ids[i]);
    if (revents & (POLLIN | POLLHUP | POLLERR | POLLRDHUP)) read_from(ids[i], revents, now);
  }
  if (entries[1].revents & POLLIN) accept_new(now);
  core_->expire(now);
  settle(now);
  changed_.notify_all();
}

void StoreServer::accept_new(Clock::time_point now) {
  for (int i = 0; i < kAcceptsPerWake; ++i) {
    int raw = ::accept4(listener_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (raw < 0) return;  // EAGAIN, or a connection that died before we took it
    net::Fd fd(raw);
    int on = 1;
    ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    ::setsockopt(fd.get(), SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
    ConnectionId id = next_id_++;
    if (!core_->accept(id, net::peer_name(fd.get()), now)) continue;  // over the limit: fd closes here
    sockets_[id] = std::move(fd);
  }
}

void StoreServer::read_from(ConnectionId id, short revents, Clock::time_point now) {
  if (!core_->wants_read(id)) {
    // Not reading this peer now (a parked request, back-pressure), but a hang-up still matters: a
    // client waits for its answer with its write side open, so a hang-up means it has gone.
    if (revents & (POLLHUP | POLLERR | POLLRDHUP)) close_connection(id, now);
    return;
  }
  uint8_t buffer[kReadChunk];
  ssize_t n = ::recv(sockets_[id].get(), buffer, sizeof buffer, 0);
  if (n > 0) {
    if (tap_) tap_(false, buffer, static_cast<size_t>(n));
    try {
      core_->receive(id, buffer, static_cast<size_t>(n), now);
    } catch (const std::exception &) {
      close_connection(id, now);  // e.g. no memory for this request: that connection ends, not the store
    }
    return;
  }
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
  close_connection(id, now);
}

void StoreServer::flush(ConnectionId id) {
  size_t size = 0;
  const uint8_t *data = core_->pending_output(id, &size);
  while (size > 0) {
    ssize_t n = ::send(sockets_[id].get(), data, size, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n <= 0) return;  // EAGAIN: poll will say when; errors show up as a hang-up on read
    if (tap_) tap_(true, data, static_cast<size_t>(n));
    core_->sent(id, static_cast<size_t>(n));
    data = core_->pending_output(id, &size);
  }
}

void StoreServer::close_connection(ConnectionId id, Clock::time_point now) {
  sockets_.erase(id);
  closing_since_.erase(id);
  core_->disconnected(id, now);
}

void StoreServer::settle(Clock::time_point now) {
  std::vector<ConnectionId> ids;
  for (const auto &entry : sockets_) ids.push_back(entry.first);
  for (ConnectionId id : ids) {
    if (!sockets_.count(id)) continue;
    flush(id);
    switch (core_->disposition(id)) {
      case StoreCore::Disposition::Keep: break;
      case StoreCore::Disposition::CloseNow: close_connection(id, now); break;
      case StoreCore::Disposition::CloseAfterFlush: {
        size_t pending = 0;
        core_->pending_output(id, &pending);
        auto since = closing_since_.emplace(id, now).first->second;
        if (pending == 0) {
          // Half-close first so the peer reads the last frame before it sees the end.
          ::shutdown(sockets_[id].get(), SHUT_WR);
          close_connection(id, now);
        } else if (now - since > kFlushGrace) {
          close_connection(id, now);
        }
        break;
      }
    }
  }
}

}  // namespace xffl::bootstrap
