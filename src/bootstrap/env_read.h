// Reading one XFFL_* variable of the registry (bootstrap/env_registry.h) from an Environment, with the
// type, range and default the registry declares for it. Unset or empty gives nullopt; a value that
// does not fit is xffl::Error(XFFL_EINVAL) naming the variable and the value ("XFFL_STREAMS=0 must be
// at least 1", "XFFL_BACKEND='gloo' is not one of none, ucx, nccl").
#ifndef XFFL_SRC_BOOTSTRAP_ENV_READ_H
#define XFFL_SRC_BOOTSTRAP_ENV_READ_H

#include <optional>
#include <string>

#include "bootstrap/env_registry.h"
#include "bootstrap/env_values.h"

namespace xffl::bootstrap::registry {

// The text as set, unchecked (a CountList is parsed where its meaning is known).
std::optional<std::string> read_raw(const Environment &environment, Var id);
// Count and Port, with the variable they came from.
std::optional<Setting> read_setting(const Environment &environment, Var id);
// Seconds as milliseconds; Choice as the chosen value; Flag as 0 or 1.
std::optional<int> read_int(const Environment &environment, Var id);
// Text, else its fallbacks in order (XFFL_JOB_ID, else TORCHELASTIC_RUN_ID, ...), within max_length.
std::optional<std::string> read_text(const Environment &environment, Var id);

// The default as read_int / read_text would read it; XFFL_EINTERNAL for a variable without one.
int default_int(Var id);
std::string default_string(Var id);

}  // namespace xffl::bootstrap::registry

#endif
