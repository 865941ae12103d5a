// Backend names, as XFFL_BACKEND and XFFL_CROSS_FACILITY_BACKEND take them and as xffl_state_describe
// and xffl-topo print them: read from the one table of backends (backend_table.h).
#ifndef XFFL_SRC_COMM_BACKEND_NAMES_H
#define XFFL_SRC_COMM_BACKEND_NAMES_H

#include <optional>
#include <string>
#include <vector>

#include "comm/backend_table.h"
#include "xffl/types.h"

namespace xffl::comm {

using BackendName = BackendEntry;  // kind and name (lower case), with the rest of its line

// Every backend this library knows of (built in or not), in enum order.
inline const std::vector<BackendName> &backend_names() { return backend_table(); }

// "none", "ucx", "nccl"; "unknown" for a value outside the enum.
const char *backend_name(int kind);

// Case-insensitive; nullopt for a name not in the table.
std::optional<xffl_backend_t> backend_from_name(const std::string &name);

}  // namespace xffl::comm

#endif
