// Where a wan hub listens, and the address it publishes for its peers in other facilities to connect
// to: the local address of the route to the store's host (the way a peer elsewhere comes back), unless
// that route is loopback while the store's host is not a loopback name.
//
// That happens when the store's host names this very host and the name resolves to loopback here:
// under PMIx, rank 0 serves the store at its host name (bootstrap/pmix_store.h), which Debian's
// /etc/hosts maps to 127.0.1.1 on that host while the other hosts resolve it to its real address; or
// a MASTER_ADDR naming rank 0's host. Loopback published there would send every peer to its own
// host. The hub then takes this host's primary address (its first interface that is up, not
// loopback, not link-local), and loopback only when the host has none. A store host that is itself
// loopback (127.0.0.1, localhost: the job runs on one host) keeps loopback. An empty store host
// (none known) is treated like a name that resolves to loopback.
#ifndef XFFL_SRC_COMM_WAN_LISTEN_ADDRESS_H
#define XFFL_SRC_COMM_WAN_LISTEN_ADDRESS_H

#include <chrono>
#include <string>
#include <vector>

namespace xffl::comm::wan {

// The IPv4 address (dotted) this rank's hub listens on and publishes, for the job's store host.
// Throws xffl::Error XFFL_ENETWORK when the store's host, named, resolves to no IPv4 address that has
// a route, XFFL_ETIMEOUT when its lookup does not finish within lookup_timeout.
std::string listen_address(const std::string &store_host, std::chrono::milliseconds lookup_timeout);

// The rule of listen_address, without the system: `route` is the local address of the route to the
// store's host ("" when none was looked up), `host_addresses` this host's non-loopback IPv4
// addresses, primary first.
std::string choose_listen_address(const std::string &store_host, const std::string &route,
                                  const std::vector<std::string> &host_addresses);

// Whether `host` means this host wherever it is resolved: an address of 127.0.0.0/8, ::1, or localhost.
bool is_loopback_name(const std::string &host);

// This host's IPv4 addresses that peers on other hosts may reach: of interfaces that are up, neither
// loopback nor link-local (169.254.0.0/16), in the kernel's interface order.
std::vector<std::string> host_addresses();

}  // namespace xffl::comm::wan

#endif
