// What the launcher told this process: the inputs of xffl_state_from_env (set_global, set_node,
// set_exec_device and the layout), read from environment variables. The options every state reads
// (timeout, log level, job id, auth token, ...) are Options::from_environment's (state/options.h).
//
// read_launch_env() is a pure function over a name -> value map (tests need no real environment);
// read_process_launch_env() applies it to the process environment (common/environment.h). A variable
// set to "" counts as unset. The XFFL_* variables are declared in bootstrap/env_registry.h.
//
// Where each value comes from, first match wins:
//   1. explicit xFFL variables, field by field: XFFL_RANK, XFFL_WORLD_SIZE, XFFL_LOCAL_RANK,
//      XFFL_LOCAL_WORLD_SIZE, XFFL_NODE_RANK, XFFL_NODE_WORLD_SIZE, XFFL_MASTER_ADDR, XFFL_MASTER_PORT;
//   2. torchrun (present when RANK or WORLD_SIZE is set): RANK, WORLD_SIZE, LOCAL_RANK,
//      LOCAL_WORLD_SIZE, GROUP_RANK (node rank), GROUP_WORLD_SIZE (nodes), MASTER_ADDR, MASTER_PORT;
//   3. Open MPI (present when OMPI_COMM_WORLD_RANK is set): OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK,
//      _LOCAL_SIZE; master = MASTER_ADDR, else PMIx (below); without either it is an error (Open MPI
//      does not say where rank 0 runs), MASTER_PORT defaults to 29500. Open MPI has no node-index
//      variable (OMPI_COMM_WORLD_NODE_RANK counts processes of all jobs on this node), so node rank
//      and count are derived only when the ranks are placed in blocks (rank mod LOCAL_SIZE ==
//      LOCAL_RANK and LOCAL_SIZE divides SIZE);
//   4. SLURM (present when SLURM_PROCID is set): SLURM_PROCID, SLURM_NTASKS (or SLURM_NPROCS),
//      SLURM_LOCALID, SLURM_NODEID, nodes from SLURM_STEP_NUM_NODES, SLURM_NNODES or
//      SLURM_JOB_NUM_NODES (the step's count first: a step may use part of the allocation), tasks on
//      this node from SLURM_STEP_TASKS_PER_NODE, SLURM_TASKS_PER_NODE ("4(x2),3", indexed by
//      SLURM_NODEID) or SLURM_NTASKS_PER_NODE; master = MASTER_ADDR, else the first host of
//      SLURM_STEP_NODELIST, SLURM_NODELIST or SLURM_JOB_NODELIST ("gpu[003-005],login1" -> gpu003,
//      where srun places task 0); port = MASTER_PORT, else 29500 (torchrun's default).
// PMIx: under Open MPI or SLURM, when neither MASTER_ADDR nor XFFL_MASTER_ADDR is set and the process
// is a PMIx client (PMIX_RANK and PMIX_NAMESPACE set: mpirun, srun --mpi=pmix), the store's address is
// exchanged through PMIx (bootstrap/pmix_store.h): master_addr stays empty, store_address_from_pmix is
// set, and the port is MASTER_PORT (or XFFL_MASTER_PORT), else 0 (rank 0 lets the kernel choose). This
// replaces SLURM's first host of the node list, which names no free port and may not be where task 0
// runs. An explicit MASTER_ADDR always wins.
// Only one launcher supplies the identity, the first present in the order above: the innermost one.
// torchrun or mpirun inside an sbatch script see SLURM variables too, and SLURM_PROCID then numbers
// torchrun's agents or mpirun's daemons, not the workers. The xFFL variables then replace single
// fields of it.
//
// xFFL's own settings: XFFL_FEDERATED (group sizes in processes, "4,8"; one value F expands to W/F
// groups), XFFL_FEDERATED_LOCAL_WORLD_SIZE (group sizes in NODES, as xFFL's Python reads it; one value
// expands; converted to processes with the ranks of each node), XFFL_HSDP, XFFL_BACKEND (none, ucx,
// nccl), XFFL_DEVICE (cpu, cuda), XFFL_STREAMS.
//
// A missing or contradictory variable is an xffl::Error(XFFL_EINVAL) that names it: "RANK=5 but
// WORLD_SIZE=4", "MASTER_PORT='abc' is not a port (an integer in [1, 65535])", "XFFL_FEDERATED and
// XFFL_FEDERATED_LOCAL_WORLD_SIZE disagree: ...".
#ifndef XFFL_SRC_BOOTSTRAP_LAUNCH_ENV_H
#define XFFL_SRC_BOOTSTRAP_LAUNCH_ENV_H

#include <optional>
#include <string>
#include <vector>

#include "bootstrap/env_values.h"
#include "xffl/types.h"

namespace xffl::bootstrap {

enum class Launcher { Xffl, Torchrun, Slurm, OpenMpi };

// "xffl", "torchrun", "slurm", "openmpi".
const char *launcher_name(Launcher launcher);

// The arguments of xffl_set_node, known only when all four are.
struct NodePlacement {
  int local_rank = 0;
  int local_size = 0;
  int node_rank = 0;
  int node_world_size = 0;
};

struct LaunchEnv {
  Launcher launcher = Launcher::Xffl;  // which launcher's variables gave the identity
  int rank = 0;
  int world_size = 1;
  std::string master_addr;  // empty when store_address_from_pmix
  int master_port = 0;       // 0: rank 0 chooses (PMIx only)
  bool store_address_from_pmix = false;  // rank 0 publishes the store's address through PMIx

  // Rank on this node and ranks on this node, for choosing a device; may be known without the node.
  std::optional<int> local_rank;
  std::optional<int> local_world_size;
  std::optional<NodePlacement> node;

  std::optional<std::vector<int>> federated_sizes;  // in processes, one entry per group, sum = world_size
  std::optional<int> hsdp;
  std::optional<xffl_backend_t> backend;
  std::optional<xffl_device_t> device;
  std::optional<int> streams;
};

// Throws xffl::Error(XFFL_EINVAL) naming the variable that is missing, malformed or contradictory.
LaunchEnv read_launch_env(const Environment &env);

LaunchEnv read_process_launch_env();

}  // namespace xffl::bootstrap

#endif
