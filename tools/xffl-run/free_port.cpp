#include "free_port.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <netdb.h>
#include <netinet/in.h>
#include <random>
#include <stdexcept>
#include <sys/socket.h>
#include <utility>

#include "bootstrap/name_lookup.h"
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

using xffl::bootstrap::net::AddrinfoList;

// The master address's addresses (any port: bind_port sets it), looked up once for every draw.
AddrinfoList master_addresses(const std::string& address, std::chrono::milliseconds lookup_timeout) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  namespace net = xffl::bootstrap::net;
  net::NameLookup found = net::lookup_name(address, "0", hints, std::chrono::steady_clock::now() + lookup_timeout);
  if (found.kind == net::NameLookup::Timeout)
    throw std::runtime_error("--master-addr '" + address + "': the name lookup of '" + address +
                             "' did not finish within " + std::to_string(lookup_timeout.count()) +
                             " ms (--timeout, else XFFL_TIMEOUT); does this host reach a DNS server that answers "
                             "for it? (a numeric --master-addr needs none)");
  if (found.kind == net::NameLookup::Failed)
    throw UsageError("--master-addr '" + address + "' does not resolve: " +
                     (found.rc == EAI_SYSTEM ? std::string(std::strerror(found.error)) : ::gai_strerror(found.rc)));
  return std::move(found.list);
}

void set_port(sockaddr* address, int port) {
  if (address->sa_family == AF_INET)
    reinterpret_cast<sockaddr_in*>(address)->sin_port = htons(static_cast<uint16_t>(port));
  if (address->sa_family == AF_INET6)
    reinterpret_cast<sockaddr_in6*>(address)->sin6_port = htons(static_cast<uint16_t>(port));
}

// Binds `port` (0: the kernel's pick) on the addresses; returns the port bound and its socket, or port 0.
HeldPort bind_port(const AddrinfoList& found, int port, std::string& last_error) {
  HeldPort held;
  for (addrinfo* candidate = found.get(); candidate && held.port == 0; candidate = candidate->ai_next) {
    UniqueFd sock(::socket(candidate->ai_family, candidate->ai_socktype | SOCK_CLOEXEC, candidate->ai_protocol));
    if (!sock) {
      last_error = std::strerror(errno);
      continue;
    }
    int on = 1;
    ::setsockopt(sock.get(), SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    sockaddr_storage bound{};
    socklen_t length = sizeof bound;
    sockaddr_storage wanted{};
    std::memcpy(&wanted, candidate->ai_addr, candidate->ai_addrlen);
    set_port(reinterpret_cast<sockaddr*>(&wanted), port);
    if (::bind(sock.get(), reinterpret_cast<sockaddr*>(&wanted), candidate->ai_addrlen) != 0 ||
        ::getsockname(sock.get(), reinterpret_cast<sockaddr*>(&bound), &length) != 0) {
      last_error = std::strerror(errno);
      continue;
    }
    if (bound.ss_family == AF_INET) held.port = ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
    if (bound.ss_family == AF_INET6) held.port = ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port);
    if (held.port != 0) held.holder = std::move(sock);
  }
  return held;
}

}  // namespace

HeldPort find_free_port(const std::string& address, std::chrono::milliseconds lookup_timeout) {
  const AddrinfoList found = master_addresses(address, lookup_timeout);
  std::string last_error = "no address";
  const int ephemeral_start = ephemeral_range_start();
  if (ephemeral_start > kLowestDrawn + kDraws) {
    std::mt19937 generator(std::random_device{}());
    std::uniform_int_distribution<int> draw(kLowestDrawn, ephemeral_start - 1);
    for (int attempt = 0; attempt < kDraws; ++attempt) {
      HeldPort held = bind_port(found, draw(generator), last_error);
      if (held.port != 0) return held;
    }
  }
  HeldPort held = bind_port(found, 0, last_error);
  if (held.port != 0) return held;
  throw UsageError("cannot bind a port on --master-addr '" + address + "': " + last_error);
}

}  // namespace xffl_run
