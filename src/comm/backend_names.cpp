#include "comm/backend_names.h"

#include <strings.h>

namespace xffl::comm {

const char *backend_name(int kind) {
  const BackendEntry *entry = find_backend(kind);
  return entry ? entry->name : "unknown";
}

std::optional<xffl_backend_t> backend_from_name(const std::string &name) {
  for (const BackendEntry &entry : backend_table())
    if (strcasecmp(name.c_str(), entry.name) == 0) return entry.kind;
  return std::nullopt;
}

}  // namespace xffl::comm
