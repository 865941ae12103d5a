#include "state/from_env.h"

#include "bootstrap/env_read.h"
#include "bootstrap/launch_env.h"

namespace xffl {

std::unique_ptr<xffl_state> state_from_environment() {
  using bootstrap::registry::Var;
  using bootstrap::registry::default_int;
  const bootstrap::LaunchEnv env = bootstrap::read_process_launch_env();
  auto st = std::make_unique<xffl_state>();  // reads the options' variables (Options::from_environment)
  // A launcher environment means several processes: the registry's default backend is UCX.
  const auto backend = env.backend.value_or(static_cast<xffl_backend_t>(default_int(Var::Backend)));
  const auto device = env.device.value_or(static_cast<xffl_device_t>(default_int(Var::Device)));
  st->set_global(backend, device, env.master_addr, env.master_port, env.rank, env.world_size,
                 env.store_address_from_pmix);
  if (env.node) st->set_node(env.node->local_rank, env.node->local_size, env.node->node_rank, env.node->node_world_size);
  st->set_exec_device(-1, env.streams.value_or(default_int(Var::Streams)));
  if (env.federated_sizes) {
    st->federated_scaling(*env.federated_sizes, env.hsdp.value_or(0));
  } else if (env.hsdp) {
    st->set_hsdp(*env.hsdp);
  } else {
    st->set_fsdp();
  }
  st->set_default_init_device();  // as xFFL's setup_distributed_process_group does, after the layout
  return st;
}

}  // namespace xffl
