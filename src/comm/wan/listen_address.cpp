#include "comm/wan/listen_address.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cctype>

#include "bootstrap/socket.h"
#include "common/error.h"

namespace xffl::comm::wan {

namespace net = bootstrap::net;

namespace {

constexpr const char *kLoopback = "127.0.0.1";

bool in_loopback_net(const in_addr &address) { return (ntohl(address.s_addr) >> 24) == 127; }

bool is_loopback_address(const std::string &text) {
  in_addr address{};
  return inet_pton(AF_INET, text.c_str(), &address) == 1 && in_loopback_net(address);
}

// The local address this host uses to reach `host` (a routing lookup, no packet sent): the one peers
// in other facilities can come back to.
std::string route_address(const std::string &host, std::chrono::milliseconds lookup_timeout) {
  const net::Resolved resolved = net::resolve(host, 9, false, net::Clock::now() + lookup_timeout);
  if (resolved.kind == net::Resolved::Timeout)
    fail(XFFL_ETIMEOUT, "wan: cannot choose the address to listen on: ",
         net::lookup_timeout_text(host, lookup_timeout.count()));
  const std::string &error = resolved.error;
  for (const net::Address &address : resolved.addresses) {
    if (address.storage.ss_family != AF_INET) continue;
    net::Fd probe(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    if (!probe || ::connect(probe.get(), reinterpret_cast<const sockaddr *>(&address.storage), address.length) != 0)
      continue;
    sockaddr_in local{};
    socklen_t length = sizeof local;
    if (::getsockname(probe.get(), reinterpret_cast<sockaddr *>(&local), &length) != 0) continue;
    char text[INET_ADDRSTRLEN] = {};
    if (::inet_ntop(AF_INET, &local.sin_addr, text, sizeof text)) return text;
  }
  fail(XFFL_ENETWORK, "wan: no IPv4 route to the store's host '", host, "' to listen on",
       error.empty() ? "" : ": ", error);
}

}  // namespace

bool is_loopback_name(const std::string &host) {
  std::string lower(host);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  if (lower == "localhost" || lower == "::1" || lower == "[::1]") return true;
  return is_loopback_address(host);
}

std::vector<std::string> host_addresses() {
  std::vector<std::string> found;
  ifaddrs *interfaces = nullptr;
  if (getifaddrs(&interfaces) != 0) return found;  // none known: the caller falls back to loopback
  for (const ifaddrs *entry = interfaces; entry; entry = entry->ifa_next) {
    if (!entry->ifa_addr || entry->ifa_addr->sa_family != AF_INET) continue;
    if (!(entry->ifa_flags & IFF_UP) || (entry->ifa_flags & IFF_LOOPBACK)) continue;
    const in_addr address = reinterpret_cast<const sockaddr_in *>(entry->ifa_addr)->sin_addr;
    const uint32_t host_order = ntohl(address.s_addr);
    if (in_loopback_net(address) || (host_order >> 16) == 0xa9fe) continue;  // 169.254/16: this link only
    char text[INET_ADDRSTRLEN] = {};
    if (inet_ntop(AF_INET, &address, text, sizeof text) &&
        std::find(found.begin(), found.end(), text) == found.end())
      found.emplace_back(text);
  }
  freeifaddrs(interfaces);
  return found;
}

std::string choose_listen_address(const std::string &store_host, const std::string &route,
                                  const std::vector<std::string> &host_addresses) {
  if (is_loopback_name(store_host)) return route.empty() ? kLoopback : route;
  if (!route.empty() && !is_loopback_address(route)) return route;
  // The store's host is unknown, or a name that is loopback only here: peers elsewhere need a real one.
  if (!host_addresses.empty()) return host_addresses.front();
  return route.empty() ? kLoopback : route;
}

std::string listen_address(const std::string &store_host, std::chrono::milliseconds lookup_timeout) {
  const std::string route = store_host.empty() ? std::string() : route_address(store_host, lookup_timeout);
  const bool real_route = !route.empty() && !is_loopback_address(route);
  if (is_loopback_name(store_host) || real_route) return choose_listen_address(store_host, route, {});
  return choose_listen_address(store_host, route, host_addresses());
}

}  // namespace xffl::comm::wan
