#include "free_port.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <netdb.h>
#include <netinet/in.h>
#include <random>
#include <sys/socket.h>
#include <utility>

#include "errors.h"
#include "fd.h"

namespace xffl_run {
namespace {

// Ports below this may belong to services (etcd 2379, slurmctld 6817, ...): never drawn.
constexpr int kLowestDrawn = 20000;
constexpr int kDraws = 64;

// The first port of the kernel's ephemeral range; 0 when it cannot be read.
int ephemeral_range_start() {
  std::ifstream range("/proc/sys/net/ipv4/ip_local_port_range");
  int low = 0, high = 0;
  if (!(range >> low >> high)) return 0;
  return low;
}

// Binds `port` (0: the kernel's pick) on `address`; returns the port bound and its socket, or port 0.
HeldPort bind_port(const std::string& address, int port, std::string& last_error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  int rc = ::getaddrinfo(address.c_str(), std::to_string(port).c_str(), &hints, &found);
  if (rc != 0) throw UsageError("--master-addr '" + address + "' does not resolve: " + ::gai_strerror(rc));

  HeldPort held;
  for (addrinfo* candidate = found; candidate && held.port == 0; candidate = candidate->ai_next) {
    UniqueFd sock(::socket(candidate->ai_family, candidate->ai_socktype | SOCK_CLOEXEC, candidate->ai_protocol));
    if (!sock) {
      last_error = std::strerror(errno);
      continue;
    }
    int on = 1;
    ::setsockopt(sock.get(), SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    sockaddr_storage bound{};
    socklen_t length = sizeof bound;
    if (::bind(sock.get(), candidate->ai_addr, candidate->ai_addrlen) != 0 ||
        ::getsockname(sock.get(), reinterpret_cast<sockaddr*>(&bound), &length) != 0) {
      last_error = std::strerror(errno);
      continue;
    }
    if (bound.ss_family == AF_INET) held.port = ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
    if (bound.ss_family == AF_INET6) held.port = ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port);
    if (held.port != 0) held.holder = std::move(sock);
  }
  ::freeaddrinfo(found);
  return held;
}

}  // namespace

HeldPort find_free_port(const std::string& address) {
  std::string last_error = "no address";
  const int ephemeral_start = ephemeral_range_start();
  if (ephemeral_start > kLowestDrawn + kDraws) {
    std::mt19937 generator(std::random_device{}());
    std::uniform_int_distribution<int> draw(kLowestDrawn, ephemeral_start - 1);
    for (int attempt = 0; attempt < kDraws; ++attempt) {
      HeldPort held = bind_port(address, draw(generator), last_error);
      if (held.port != 0) return held;
    }
  }
  HeldPort held = bind_port(address, 0, last_error);
  if (held.port != 0) return held;
  throw UsageError("cannot bind a port on --master-addr '" + address + "': " + last_error);
}

}  // namespace xffl_run
