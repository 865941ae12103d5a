#include "free_port.h"

#include <cerrno>
#include <cstring>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "errors.h"
#include "fd.h"

namespace xffl_run {

int find_free_port(const std::string& address) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  int rc = ::getaddrinfo(address.c_str(), "0", &hints, &found);
  if (rc != 0) throw UsageError("--master-addr '" + address + "' does not resolve: " + ::gai_strerror(rc));

  std::string last_error = "no address";
  int port = 0;
  for (addrinfo* candidate = found; candidate && port == 0; candidate = candidate->ai_next) {
    UniqueFd sock(::socket(candidate->ai_family, candidate->ai_socktype | SOCK_CLOEXEC, candidate->ai_protocol));
    if (!sock) {
      last_error = std::strerror(errno);
      continue;
    }
    sockaddr_storage bound{};
    socklen_t length = sizeof bound;
    if (::bind(sock.get(), candidate->ai_addr, candidate->ai_addrlen) != 0 ||
        ::getsockname(sock.get(), reinterpret_cast<sockaddr*>(&bound), &length) != 0) {
      last_error = std::strerror(errno);
      continue;
    }
    if (bound.ss_family == AF_INET) port = ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
    if (bound.ss_family == AF_INET6) port = ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port);
  }
  ::freeaddrinfo(found);
  if (port == 0) throw UsageError("cannot bind a port on --master-addr '" + address + "': " + last_error);
  return port;
}

}  // namespace xffl_run
