// MASTER_PORT when none is given: a port the kernel reports free on the master address.
#ifndef XFFL_RUN_FREE_PORT_H
#define XFFL_RUN_FREE_PORT_H

#include <string>

namespace xffl_run {

// Binds port 0 on `address` and returns the port the kernel picked. Like torchrun, the port is
// released again before the ranks start, so another process could take it in between; rank 0 then
// fails to bind and the job fails fast. Throws UsageError if the address cannot be bound at all.
int find_free_port(const std::string& address);

}  // namespace xffl_run

#endif
