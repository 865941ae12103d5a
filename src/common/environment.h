// The process environment. This file is the only place in src/ that reads it (getenv, environ):
// everything else reads a snapshot, an Environment map, which tests can build by hand. The XFFL_*
// variables themselves are declared in bootstrap/env_registry.h.
#ifndef XFFL_SRC_COMMON_ENVIRONMENT_H
#define XFFL_SRC_COMMON_ENVIRONMENT_H

#include <map>
#include <string>
#include <vector>

namespace xffl {

// Variable name -> value. A variable set to the empty string counts as unset wherever xffl reads one
// (bootstrap/env_values.h lookup); the map keeps it, as the process has it.
using Environment = std::map<std::string, std::string>;

// A copy of the process's environ, taken now.
Environment process_environment();

// A copy of only the named variables (those set): what a reader of a few variables needs, without
// copying the whole environment (xffl_state_create reads the options' variables for every state;
// xffl-topo makes one state per rank of a 65,536-rank world).
Environment process_environment(const std::vector<const char *> &names);

// Whether the process environment holds `name` at all, even set to "": UCX's own reading of its
// variables (UCX_ERROR_SIGNALS, UCX_DEBUG_SIGNO), where an empty value means "none".
bool process_environment_has(const char *name);

}  // namespace xffl

#endif
