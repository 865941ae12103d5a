#include "bootstrap/socket.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "bootstrap/env_registry.h"
#include "bootstrap/name_lookup.h"
#include "bootstrap/text.h"

namespace xffl::bootstrap::net {

void Fd::reset() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

std::string errno_text(int error) {
  char buffer[256];
  // GNU strerror_r returns the message pointer (which may or may not be the buffer).
  return std::string(strerror_r(error, buffer, sizeof buffer));
}

namespace {

std::string numeric_text(const sockaddr *address, socklen_t length) {
  char host[NI_MAXHOST];
  char service[NI_MAXSERV];
  if (getnameinfo(address, length, host, sizeof host, service, sizeof service, NI_NUMERICHOST | NI_NUMERICSERV) != 0)
    return "unknown address";
  return host_port(host, std::atoi(service));
}

// Milliseconds left until the deadline, for poll(): 0 when past it, capped so it fits an int.
int remaining_ms(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  if (left <= 0) return 0;
  return static_cast<int>(std::min<long long>(left + 1, 1 << 30));
}

// Waits for the events; Ok when they came, Timeout at the deadline, Error on poll failure.
IoResult wait_for(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    pollfd entry{fd, events, 0};
    int ready = ::poll(&entry, 1, remaining_ms(deadline));
    if (ready > 0) return {};
    if (ready == 0) {
      if (Clock::now() >= deadline) return {IoResult::Timeout};
      continue;
    }
    if (errno == EINTR) continue;
    return {IoResult::Error, errno};
  }
}

}  // namespace

Resolved resolve(const std::string &host, int port, bool passive, Clock::time_point deadline) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0);
  NameLookup lookup = lookup_name(host, std::to_string(port), hints, deadline);
  Resolved out;
  if (lookup.kind == NameLookup::Timeout) {
    out.kind = Resolved::Timeout;
    return out;
  }
  if (lookup.kind == NameLookup::Failed) {
    out.error = lookup.rc == EAI_SYSTEM ? errno_text(lookup.error) : gai_strerror(lookup.rc);
    out.kind = lookup.rc == EAI_AGAIN || lookup.rc == EAI_SYSTEM ? Resolved::Temporary : Resolved::Permanent;
    return out;
  }
  for (const addrinfo *entry = lookup.list.get(); entry; entry = entry->ai_next) {
    Address address;
    std::memcpy(&address.storage, entry->ai_addr, entry->ai_addrlen);
    address.length = entry->ai_addrlen;
    address.text = numeric_text(entry->ai_addr, entry->ai_addrlen);
    out.addresses.push_back(address);
  }
  return out;
}

std::string lookup_timeout_text(const std::string &host, long long timeout_ms, const std::string &bound) {
  return "the name lookup of '" + host + "' did not finish within " + std::to_string(timeout_ms) + " ms" +
         (bound.empty() ? "" : " (" + bound + ")") + "; does this host reach a DNS server that answers for it?";
}

std::string lookup_timeout_text(const std::string &host, long long timeout_ms) {
  return lookup_timeout_text(host, timeout_ms, registry::name(registry::Var::Timeout));
}

std::string peer_name(int fd) {
  sockaddr_storage storage{};
  socklen_t length = sizeof storage;
  if (::getpeername(fd, reinterpret_cast<sockaddr *>(&storage), &length) != 0) return "unknown peer";
  return numeric_text(reinterpret_cast<sockaddr *>(&storage), length);
}

int local_port(int fd) {
  sockaddr_storage storage{};
  socklen_t length = sizeof storage;
  if (::getsockname(fd, reinterpret_cast<sockaddr *>(&storage), &length) != 0) return -1;
  if (storage.ss_family == AF_INET) return ntohs(reinterpret_cast<sockaddr_in *>(&storage)->sin_port);
  if (storage.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6 *>(&storage)->sin6_port);
  return -1;
}

void set_nonblocking(int fd) {
  int flags = ::fcntl(fd, F_GETFL, 0);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

IoResult connect_until(const Address &address, Clock::time_point deadline, Fd *out) {
  Fd fd(::socket(address.storage.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd) return {IoResult::Error, errno};
  int rc = ::connect(fd.get(), reinterpret_cast<const sockaddr *>(&address.storage), address.length);
  if (rc != 0) {
    if (errno != EINPROGRESS && errno != EINTR) return {IoResult::Error, errno};
    IoResult waited = wait_for(fd.get(), POLLOUT, deadline);
    if (waited.kind != IoResult::Ok) return waited;
    int error = 0;
    socklen_t length = sizeof error;
    if (::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &error, &length) != 0) return {IoResult::Error, errno};
    if (error != 0) return {IoResult::Error, error};
  }
  int on = 1;
  ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
  // Keepalive turns a store host that vanished without a FIN into an error rather than silence.
  ::setsockopt(fd.get(), SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
  *out = std::move(fd);
  return {};
}

IoResult send_all(int fd, const uint8_t *data, size_t size, Clock::time_point deadline) {
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::send(fd, data + done, size - done, MSG_NOSIGNAL);
    if (n > 0) {
      done += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      IoResult waited = wait_for(fd, POLLOUT, deadline);
      if (waited.kind != IoResult::Ok) return waited;
      continue;
    }
    if (n < 0 && (errno == EPIPE || errno == ECONNRESET)) return {IoResult::Closed, errno};
    return {IoResult::Error, n < 0 ? errno : EIO};
  }
  return {IoResult::Ok, 0, done};
}

IoResult receive_some(int fd, uint8_t *buffer, size_t capacity, Clock::time_point deadline) {
  for (;;) {
    ssize_t n = ::recv(fd, buffer, capacity, 0);
    if (n > 0) return {IoResult::Ok, 0, static_cast<size_t>(n)};
    if (n == 0) return {IoResult::Closed};
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      IoResult waited = wait_for(fd, POLLIN, deadline);
      if (waited.kind != IoResult::Ok) return waited;
      continue;
    }
    if (errno == ECONNRESET) return {IoResult::Closed, errno};
    return {IoResult::Error, errno};
  }
}

}  // namespace xffl::bootstrap::net
