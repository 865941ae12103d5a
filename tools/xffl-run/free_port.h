// MASTER_PORT when none is given: a port the kernel reports free on the master address.
#ifndef XFFL_RUN_FREE_PORT_H
#define XFFL_RUN_FREE_PORT_H

#include <chrono>
#include <string>

#include "fd.h"

namespace xffl_run {

// A port bound on the master address, and the socket that holds it.
struct HeldPort {
  int port = 0;
  UniqueFd holder;  // bound with SO_REUSEADDR, never listening, close-on-exec
};

// A port that binds on `address` now, held until the launcher exits.
//
// Why held: torchrun releases its pick before the ranks start, so another job can take the port in
// between. Here a four-rank job once found its port serving another job's store (two launches drew
// the same port within that gap, CI 2026-12-02).
//
// How rank 0 still gets it: the holder is bound with SO_REUSEADDR but never listens. Linux then lets
// rank 0's store (also SO_REUSEADDR) bind and listen on the same address. Any bind without
// SO_REUSEADDR fails while the holder lives, and so does another launcher's draw. A second listener
// fails too.
//
// The port is drawn at random below the kernel's ephemeral range (net.ipv4.ip_local_port_range). The
// kernel never puts the source port of an outgoing connection, or of a bind to port 0, there. Falls
// back to the kernel's pick when the range leaves no room below it. Throws UsageError if the address
// cannot be bound at all, or is a name that does not resolve; std::runtime_error if it is a name whose
// lookup does not finish within lookup_timeout (a DNS server that does not answer).
HeldPort find_free_port(const std::string& address, std::chrono::milliseconds lookup_timeout);

}  // namespace xffl_run

#endif
