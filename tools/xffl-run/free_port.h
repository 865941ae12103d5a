// MASTER_PORT when none is given: a port the kernel reports free on the master address.
#ifndef XFFL_RUN_FREE_PORT_H
#define XFFL_RUN_FREE_PORT_H

#include <string>

namespace xffl_run {

// A port that binds on `address` now. Like torchrun's, it is released again before the ranks start,
// so another process could take it in between; rank 0 then fails to bind and the job fails fast.
// What makes that rare: the port is drawn at random below the kernel's ephemeral range
// (net.ipv4.ip_local_port_range), where the kernel never puts the source port of an outgoing
// connection or of a bind to port 0. A port of that range, as the kernel picks it for port 0, was
// taken between the check and rank 0's bind once in a few thousand four-rank jobs started three at
// a time on this machine. Falls back to the kernel's pick when the range leaves no room below it. Throws UsageError if the address cannot be bound at all.
int find_free_port(const std::string& address);

}  // namespace xffl_run

#endif
