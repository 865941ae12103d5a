#include "comm/backend_names.h"

namespace xffl::comm {

const std::vector<BackendName> &backend_names() {
  static const std::vector<BackendName> names = {
      {XFFL_BACKEND_NONE, "none"},
      {XFFL_BACKEND_UCX, "ucx"},
      {XFFL_BACKEND_NCCL, "nccl"},
      {XFFL_BACKEND_WAN, "wan", /*main=*/false},
  };
  return names;
}

}  // namespace xffl::comm
