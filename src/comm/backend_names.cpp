#include "comm/backend_names.h"

#include <strings.h>

namespace xffl::comm {

const std::vector<BackendName> &backend_names() {
  static const std::vector<BackendName> names = {
      {XFFL_BACKEND_NONE, "none"},
      {XFFL_BACKEND_UCX, "ucx"},
      {XFFL_BACKEND_NCCL, "nccl"},
  };
  return names;
}

const char *backend_name(int kind) {
  for (const BackendName &entry : backend_names())
    if (entry.kind == kind) return entry.name;
  return "unknown";
}

std::optional<xffl_backend_t> backend_from_name(const std::string &name) {
  for (const BackendName &entry : backend_names())
    if (strcasecmp(name.c_str(), entry.name) == 0) return entry.kind;
  return std::nullopt;
}

}  // namespace xffl::comm
