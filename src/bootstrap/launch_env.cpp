#include "bootstrap/launch_env.h"

#include <numeric>

#include "bootstrap/env_read.h"
#include "bootstrap/slurm_lists.h"
#include "common/error.h"
#include "common/format.h"

namespace xffl::bootstrap {

namespace {

using registry::Var;

constexpr int kDefaultPort = 29500;

// One launcher's view of the job, every value with the variable it came from.
struct Identity {
  Launcher launcher = Launcher::Xffl;
  std::optional<Setting> rank, world, local_rank, local_size, node_rank, nodes;
  std::vector<int> tasks_per_node;  // per-node counts when the launcher lists them (SLURM)
  std::string tasks_per_node_variable;
  std::optional<std::string> master_addr;
  std::string master_addr_variable;
  std::optional<Setting> master_port;
  bool store_address_from_pmix = false;
};

void require_both(const std::optional<Setting> &a, const char *a_name, const std::optional<Setting> &b,
                  const char *b_name) {
  if (a && !b) fail(XFFL_EINVAL, a->shown(), " is set but ", b_name, " is not");
  if (b && !a) fail(XFFL_EINVAL, b->shown(), " is set but ", a_name, " is not");
}

std::optional<Setting> read_port(const Environment &env, const char *variable) {
  std::optional<std::string> text = lookup(env, variable);
  if (!text) return std::nullopt;
  return Setting{parse_port(variable, *text), variable, ""};
}

void read_master_addr(const Environment &env, const char *variable, Identity &id) {
  if (std::optional<std::string> addr = lookup(env, variable)) {
    id.master_addr = *addr;
    id.master_addr_variable = variable;
  }
}

// mpirun and srun --mpi=pmix start every process as a PMIx client: its server is there to ask.
bool offers_pmix(const Environment &env) { return lookup(env, "PMIX_RANK") && lookup(env, "PMIX_NAMESPACE"); }

std::optional<Identity> read_torchrun(const Environment &env) {
  Identity id;
  id.launcher = Launcher::Torchrun;
  id.rank = read_count(env, "RANK", 0);
  id.world = read_count(env, "WORLD_SIZE", 1);
  if (!id.rank && !id.world) return std::nullopt;
  require_both(id.rank, "RANK", id.world, "WORLD_SIZE");
  id.local_rank = read_count(env, "LOCAL_RANK", 0);
  id.local_size = read_count(env, "LOCAL_WORLD_SIZE", 1);
  require_both(id.local_rank, "LOCAL_RANK", id.local_size, "LOCAL_WORLD_SIZE");
  id.node_rank = read_count(env, "GROUP_RANK", 0);
  id.nodes = read_count(env, "GROUP_WORLD_SIZE", 1);
  require_both(id.node_rank, "GROUP_RANK", id.nodes, "GROUP_WORLD_SIZE");
  read_master_addr(env, "MASTER_ADDR", id);
  id.master_port = read_port(env, "MASTER_PORT");
  return id;
}

std::optional<Identity> read_slurm(const Environment &env) {
  Identity id;
  id.launcher = Launcher::Slurm;
  id.rank = read_count(env, "SLURM_PROCID", 0);
  if (!id.rank) return std::nullopt;
  id.world = read_first_count(env, {"SLURM_NTASKS", "SLURM_NPROCS"}, 1);
  if (!id.world) fail(XFFL_EINVAL, id.rank->shown(), " is set but SLURM_NTASKS is not");
  id.local_rank = read_count(env, "SLURM_LOCALID", 0);
  id.node_rank = read_count(env, "SLURM_NODEID", 0);
  id.nodes = read_first_count(env, {"SLURM_STEP_NUM_NODES", "SLURM_NNODES", "SLURM_JOB_NUM_NODES"}, 1);

  for (const char *variable : {"SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE"}) {
    std::optional<std::string> text = lookup(env, variable);
    if (!text) continue;
    std::vector<int> counts = expand_slurm_tasks_per_node(*text, variable);
    const std::string quoted = std::string(variable) + "='" + *text + "'";
    if (id.nodes && counts.size() != static_cast<size_t>(id.nodes->value))
      fail(XFFL_EINVAL, quoted, " describes ", counts.size(), " nodes but ", id.nodes->shown());
    long long total = std::accumulate(counts.begin(), counts.end(), 0LL);
    if (total != id.world->value) fail(XFFL_EINVAL, quoted, " adds up to ", total, " tasks but ", id.world->shown());
    if (!id.nodes) id.nodes = Setting{static_cast<int>(counts.size()), "", "the nodes of " + quoted};
    if (id.node_rank) {
      if (id.node_rank->value >= static_cast<int>(counts.size()))
        fail(XFFL_EINVAL, id.node_rank->shown(), " but ", quoted, " describes only ", counts.size(), " nodes");
      id.local_size = Setting{counts[static_cast<size_t>(id.node_rank->value)], "",
                              "the entry of node " + std::to_string(id.node_rank->value) + " in " + quoted};
    }
    id.tasks_per_node = counts;
    id.tasks_per_node_variable = quoted;
    break;
  }
  if (!id.local_size) id.local_size = read_count(env, "SLURM_NTASKS_PER_NODE", 1);

  read_master_addr(env, "MASTER_ADDR", id);
  if (!id.master_addr && !offers_pmix(env)) {  // with PMIx, rank 0 tells where it serves (read_identity)
    for (const char *variable : {"SLURM_STEP_NODELIST", "SLURM_NODELIST", "SLURM_JOB_NODELIST"}) {
      std::optional<std::string> text = lookup(env, variable);
      if (!text) continue;
      id.master_addr = first_slurm_host(*text, variable);
      id.master_addr_variable = std::string("the first host of ") + variable;
      break;
    }
  }
  id.master_port = read_port(env, "MASTER_PORT");
  if (!id.master_port) id.master_port = Setting{kDefaultPort, "", "the default port"};
  return id;
}

std::optional<Identity> read_openmpi(const Environment &env) {
  Identity id;
  id.launcher = Launcher::OpenMpi;
  id.rank = read_count(env, "OMPI_COMM_WORLD_RANK", 0);
  id.world = read_count(env, "OMPI_COMM_WORLD_SIZE", 1);
  if (!id.rank && !id.world) return std::nullopt;
  require_both(id.rank, "OMPI_COMM_WORLD_RANK", id.world, "OMPI_COMM_WORLD_SIZE");
  id.local_rank = read_count(env, "OMPI_COMM_WORLD_LOCAL_RANK", 0);
  id.local_size = read_count(env, "OMPI_COMM_WORLD_LOCAL_SIZE", 1);
  require_both(id.local_rank, "OMPI_COMM_WORLD_LOCAL_RANK", id.local_size, "OMPI_COMM_WORLD_LOCAL_SIZE");
  if (id.local_rank && id.local_size) {
    const int rank = id.rank->value, world = id.world->value, local = id.local_size->value;
    // Block placement is the only one in which the node index follows from these variables.
    if (world % local == 0 && rank % local == id.local_rank->value && rank < world) {
      id.node_rank = Setting{rank / local, "", "OMPI_COMM_WORLD_RANK / OMPI_COMM_WORLD_LOCAL_SIZE"};
      id.nodes = Setting{world / local, "", "OMPI_COMM_WORLD_SIZE / OMPI_COMM_WORLD_LOCAL_SIZE"};
    }
  }
  read_master_addr(env, "MASTER_ADDR", id);  // without it, PMIx tells where rank 0 serves (read_identity)
  id.master_port = read_port(env, "MASTER_PORT");
  if (!id.master_port) id.master_port = Setting{kDefaultPort, "", "the default port"};
  return id;
}

// Field-by-field replacement by the explicit xFFL variables.
void apply_xffl_overrides(const Environment &env, Identity &id) {
  auto replace = [&](std::optional<Setting> &field, Var variable) {
    if (std::optional<Setting> value = registry::read_setting(env, variable)) field = value;
  };
  replace(id.rank, Var::Rank);
  replace(id.world, Var::WorldSize);
  replace(id.local_rank, Var::LocalRank);
  replace(id.node_rank, Var::NodeRank);
  if (registry::read_raw(env, Var::LocalWorldSize) || registry::read_raw(env, Var::NodeWorldSize) ||
      registry::read_raw(env, Var::WorldSize))
    id.tasks_per_node.clear();  // the launcher's per-node list no longer describes this job
  replace(id.local_size, Var::LocalWorldSize);
  replace(id.nodes, Var::NodeWorldSize);
  read_master_addr(env, registry::name(Var::MasterAddr), id);
  replace(id.master_port, Var::MasterPort);
}

Identity read_identity(const Environment &env) {
  // The innermost launcher first: torchrun or mpirun inside a SLURM job inherit the job's SLURM
  // variables, which number the agents or mpirun's daemons, not these processes.
  std::optional<Identity> found = read_torchrun(env);
  if (!found) found = read_openmpi(env);
  if (!found) found = read_slurm(env);
  Identity id;
  if (found) {
    id = std::move(*found);
  } else {
    id.launcher = Launcher::Xffl;
    read_master_addr(env, "MASTER_ADDR", id);
    id.master_port = read_port(env, "MASTER_PORT");
  }
  apply_xffl_overrides(env, id);
  if (!id.rank || !id.world)
    fail(XFFL_EINVAL, "no launcher environment found: expected RANK and WORLD_SIZE (torchrun, xffl-run), "
                      "SLURM_PROCID and SLURM_NTASKS (srun), OMPI_COMM_WORLD_RANK and OMPI_COMM_WORLD_SIZE (mpirun), "
                      "or XFFL_RANK and XFFL_WORLD_SIZE");
  if (!id.master_addr && (id.launcher == Launcher::OpenMpi || id.launcher == Launcher::Slurm) && offers_pmix(env)) {
    id.store_address_from_pmix = true;
    // Rank 0 serves on MASTER_PORT when given, else on a port the kernel chooses (two jobs on one
    // host then never collide); the others learn it through PMIx.
    if (!lookup(env, "MASTER_PORT") && !lookup(env, registry::name(Var::MasterPort)))
      id.master_port = Setting{0, "", "a free port chosen by rank 0"};
    return id;
  }
  if (!id.master_addr) {
    if (id.launcher == Launcher::OpenMpi)
      fail(XFFL_EINVAL, "MASTER_ADDR is not set: under Open MPI (", id.rank->shown(),
           ") without PMIx (PMIX_RANK and PMIX_NAMESPACE are not set) it must name the host of rank 0, "
           "where the store runs");
    if (id.launcher == Launcher::Slurm)
      fail(XFFL_EINVAL, "MASTER_ADDR is not set and no SLURM_NODELIST or SLURM_JOB_NODELIST names the first host");
    fail(XFFL_EINVAL, "MASTER_ADDR is not set (", id.rank->shown(), "): it must name the host of rank 0");
  }
  if (!id.master_port) fail(XFFL_EINVAL, "MASTER_PORT is not set (", id.rank->shown(), ")");
  return id;
}

void check_identity(const Identity &id) {
  const Setting &rank = *id.rank, &world = *id.world;
  if (rank.value >= world.value) fail(XFFL_EINVAL, rank.shown(), " but ", world.shown());
  if (id.local_rank && id.local_size && id.local_rank->value >= id.local_size->value)
    fail(XFFL_EINVAL, id.local_rank->shown(), " but ", id.local_size->shown());
  if (id.local_size && id.local_size->value > world.value)
    fail(XFFL_EINVAL, id.local_size->shown(), " but ", world.shown());
  if (id.node_rank && id.nodes && id.node_rank->value >= id.nodes->value)
    fail(XFFL_EINVAL, id.node_rank->shown(), " but ", id.nodes->shown());
  if (id.nodes && id.nodes->value > world.value) fail(XFFL_EINVAL, id.nodes->shown(), " but ", world.shown());
  if (id.local_size && id.nodes && id.tasks_per_node.empty() &&
      static_cast<long long>(id.local_size->value) * id.nodes->value != world.value)
    fail(XFFL_EINVAL, id.local_size->shown(), " ranks on each of ", id.nodes->shown(), " nodes make ",
         static_cast<long long>(id.local_size->value) * id.nodes->value, " ranks, but ", world.shown());
  // torchrun numbers ranks node by node; anything else means the variables come from different runs.
  if (id.launcher == Launcher::Torchrun && id.local_rank && id.local_size && id.node_rank) {
    long long expected = static_cast<long long>(id.node_rank->value) * id.local_size->value + id.local_rank->value;
    if (expected != rank.value)
      fail(XFFL_EINVAL, rank.shown(), " but ", id.node_rank->shown(), " * ", id.local_size->shown(), " + ",
           id.local_rank->shown(), " = ", expected);
  }
}

// Ranks on each node in node order, when the job tells; empty otherwise.
std::vector<int> ranks_per_node(const Identity &id) {
  if (!id.tasks_per_node.empty()) return id.tasks_per_node;
  if (!id.local_size) return {};
  int local = id.local_size->value;
  if (id.nodes) return std::vector<int>(static_cast<size_t>(id.nodes->value), local);
  if (id.world->value % local == 0) return std::vector<int>(static_cast<size_t>(id.world->value / local), local);
  return {};
}

std::vector<int> federated_from_processes(const std::string &text, const Setting &world) {
  const char *variable = registry::name(Var::Federated);
  std::vector<int> sizes = parse_count_list(variable, text);
  if (sizes.size() == 1) {
    if (world.value % sizes[0] != 0)
      fail(XFFL_EINVAL, variable, "=", sizes[0], " does not divide ", world.shown(), " into equal groups");
    sizes.assign(static_cast<size_t>(world.value / sizes[0]), sizes[0]);
  }
  long long total = std::accumulate(sizes.begin(), sizes.end(), 0LL);
  if (total != world.value)
    fail(XFFL_EINVAL, variable, "='", text, "' adds up to ", total, " processes but ", world.shown());
  return sizes;
}

std::vector<int> federated_from_nodes(const std::string &text, const Identity &id) {
  const char *variable = registry::name(Var::FederatedLocalWorldSize);
  std::vector<int> per_node = ranks_per_node(id);
  if (per_node.empty())
    fail(XFFL_EINVAL, variable, "='", text, "' counts nodes, but the ranks per node are unknown: the launcher sets "
         "no LOCAL_WORLD_SIZE (or SLURM/Open MPI equivalent); set ", registry::name(Var::LocalWorldSize),
         " or give ", registry::name(Var::Federated), " in processes instead");
  const size_t nodes = per_node.size();
  std::vector<int> node_counts = parse_count_list(variable, text);
  if (node_counts.size() == 1) {
    if (nodes % static_cast<size_t>(node_counts[0]) != 0)
      fail(XFFL_EINVAL, variable, "=", node_counts[0], " does not divide the job's ", nodes, " nodes into equal groups");
    node_counts.assign(nodes / static_cast<size_t>(node_counts[0]), node_counts[0]);
  }
  long long total = std::accumulate(node_counts.begin(), node_counts.end(), 0LL);
  if (total != static_cast<long long>(nodes))
    fail(XFFL_EINVAL, variable, "='", text, "' adds up to ", total, " nodes but the job has ", nodes);
  std::vector<int> sizes;
  size_t node = 0;
  for (int count : node_counts) {
    int processes = 0;
    for (int i = 0; i < count; ++i) processes += per_node[node++];
    sizes.push_back(processes);
  }
  return sizes;
}

std::optional<std::vector<int>> read_federated(const Environment &env, const Identity &id) {
  const char *processes_name = registry::name(Var::Federated);
  const char *nodes_name = registry::name(Var::FederatedLocalWorldSize);
  std::optional<std::string> processes = registry::read_raw(env, Var::Federated);
  std::optional<std::string> nodes = registry::read_raw(env, Var::FederatedLocalWorldSize);
  std::optional<std::vector<int>> from_processes, from_nodes;
  // Facility mode (XFFL_FACILITY, XFFL_FEDERATION; set_global requires both): the job is one facility, and XFFL_FEDERATED lists every facility's
  // size as written; xffl_set_global checks it against the job (state/facility_link.h).
  if (registry::read_raw(env, Var::Facility) || registry::read_raw(env, Var::Federation)) {
    if (nodes)
      fail(XFFL_EINVAL, nodes_name, "='", *nodes, "' counts the nodes of one job, but with ",
           registry::name(Var::Facility), " each job is one facility: give every facility's size in processes in ",
           processes_name);
    if (processes) return parse_count_list(processes_name, *processes);
    return std::nullopt;
  }
  if (processes) from_processes = federated_from_processes(*processes, *id.world);
  if (nodes) from_nodes = federated_from_nodes(*nodes, id);
  if (from_processes && from_nodes && *from_processes != *from_nodes)
    fail(XFFL_EINVAL, processes_name, " and ", nodes_name, " disagree: ", processes_name, "='", *processes,
         "' gives groups of ", python_tuple(*from_processes), " processes, ", nodes_name, "='", *nodes,
         "' (nodes) gives ", python_tuple(*from_nodes));
  return from_processes ? from_processes : from_nodes;
}

}  // namespace

const char *launcher_name(Launcher launcher) {
  switch (launcher) {
    case Launcher::Xffl: return "xffl";
    case Launcher::Torchrun: return "torchrun";
    case Launcher::Slurm: return "slurm";
    case Launcher::OpenMpi: return "openmpi";
  }
  return "unknown";
}

LaunchEnv read_launch_env(const Environment &env) {
  Identity id = read_identity(env);
  check_identity(id);

  LaunchEnv out;
  out.launcher = id.launcher;
  out.rank = id.rank->value;
  out.world_size = id.world->value;
  out.master_addr = id.master_addr.value_or("");
  out.store_address_from_pmix = id.store_address_from_pmix;
  out.master_port = id.master_port->value;
  if (id.local_rank) out.local_rank = id.local_rank->value;
  if (id.local_size) out.local_world_size = id.local_size->value;
  if (id.local_rank && id.local_size && id.node_rank && id.nodes)
    out.node = NodePlacement{id.local_rank->value, id.local_size->value, id.node_rank->value, id.nodes->value};

  out.federated_sizes = read_federated(env, id);
  if (std::optional<Setting> hsdp = registry::read_setting(env, Var::Hsdp)) {
    if (hsdp->value > out.world_size) fail(XFFL_EINVAL, hsdp->shown(), " but ", id.world->shown());
    out.hsdp = hsdp->value;
  }
  if (std::optional<int> backend = registry::read_int(env, Var::Backend))
    out.backend = static_cast<xffl_backend_t>(*backend);
  if (std::optional<int> device = registry::read_int(env, Var::Device)) out.device = static_cast<xffl_device_t>(*device);
  if (std::optional<Setting> streams = registry::read_setting(env, Var::Streams)) out.streams = streams->value;
  return out;
}

LaunchEnv read_process_launch_env() { return read_launch_env(process_environment()); }

}  // namespace xffl::bootstrap
