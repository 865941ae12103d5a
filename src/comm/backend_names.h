// The one table of backend names, as XFFL_BACKEND and XFFL_CROSS_FACILITY_BACKEND take them and as
// xffl_state_describe and xffl-topo print them. A new backend adds its line here and in the factory.
#ifndef XFFL_SRC_COMM_BACKEND_NAMES_H
#define XFFL_SRC_COMM_BACKEND_NAMES_H

#include <optional>
#include <string>
#include <vector>

#include "xffl/types.h"

namespace xffl::comm {

struct BackendName {
  xffl_backend_t kind;
  const char *name;  // lower case
};

// Every backend this library knows of (built in or not), in enum order.
const std::vector<BackendName> &backend_names();

// "none", "ucx", "nccl"; "unknown" for a value outside the enum.
const char *backend_name(int kind);

// Case-insensitive; nullopt for a name not in the table.
std::optional<xffl_backend_t> backend_from_name(const std::string &name);

}  // namespace xffl::comm

#endif
