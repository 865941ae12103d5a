// The names of the built-in backends (one per xffl_backend_t value), as XFFL_BACKEND and
// XFFL_CROSS_FACILITY_BACKEND take them and as xffl_state_describe and xffl-topo print them. Pure data
// with no dependency, so that tools (xffl-run, the variable registry) can use it without the library;
// the table of backends (backend_table.h) takes its built-in lines' names from here.
#ifndef XFFL_SRC_COMM_BACKEND_NAMES_H
#define XFFL_SRC_COMM_BACKEND_NAMES_H

#include <vector>

#include "xffl/types.h"

namespace xffl::comm {

struct BackendName {
  xffl_backend_t kind;
  const char *name;  // lower case
  // Whether it may be the main backend (XFFL_BACKEND, xffl-run --backend); wan carries only the groups
  // that cross facilities (XFFL_CROSS_FACILITY_BACKEND).
  bool main = true;
};

// Every built-in backend (built into this build or not), in enum order.
const std::vector<BackendName> &backend_names();

}  // namespace xffl::comm

#endif
