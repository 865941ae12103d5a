// xffl_state_from_env: a state placed in the job its launcher describes.
#ifndef XFFL_SRC_STATE_FROM_ENV_H
#define XFFL_SRC_STATE_FROM_ENV_H

#include <memory>

#include "state/distributed_state.h"

namespace xffl {

// Reads the launcher's environment (bootstrap/launch_env.h) and runs xFFL's setup sequence on a new
// state: options, set_global, set_node (when the launcher says), set_exec_device, the layout
// (federated scaling, HSDP or FSDP) and the default init device. Collective over the job. Throws
// xffl::Error naming the variable or the call that failed; nothing is left behind.
std::unique_ptr<xffl_state> state_from_environment();

}  // namespace xffl

#endif
