// The launcher-environment reader, table-driven: torchrun, SLURM, Open MPI, xFFL's own variables,
// precedence, and every error naming its variable.
#include <optional>

#include "bootstrap/launch_env.h"
#include "common/environment.h"

// cmocka last: its fail() macro would clash with std::ios::fail and xffl::fail.
#include "bootstrap_test.h"

using namespace xffl;
using namespace xffl::bootstrap;
using bootstrap_test::contains;
using bootstrap_test::outcome_of;

namespace {

struct Expect {
  Launcher launcher;
  int rank, world;
  std::string master_addr;
  int master_port;
  std::optional<NodePlacement> node;
  std::optional<std::vector<int>> federated;
};

struct GoodCase {
  const char *name;
  Environment env;
  Expect expect;
};

const Environment kTorchrun = {{"RANK", "5"},          {"WORLD_SIZE", "8"},       {"LOCAL_RANK", "1"},
                               {"LOCAL_WORLD_SIZE", "4"}, {"GROUP_RANK", "1"},     {"GROUP_WORLD_SIZE", "2"},
                               {"MASTER_ADDR", "10.0.0.1"}, {"MASTER_PORT", "29400"}};

const Environment kSlurm = {{"SLURM_PROCID", "6"},         {"SLURM_NTASKS", "11"},     {"SLURM_LOCALID", "2"},
                            {"SLURM_NODEID", "1"},         {"SLURM_NNODES", "3"},      {"SLURM_JOB_NUM_NODES", "5"},
                            {"SLURM_TASKS_PER_NODE", "4(x2),3"}, {"SLURM_JOB_NODELIST", "gpu[003-005,007],login1"},
                            {"SLURM_JOB_ID", "4242"}};

const Environment kOpenMpi = {{"OMPI_COMM_WORLD_RANK", "5"},       {"OMPI_COMM_WORLD_SIZE", "8"},
                              {"OMPI_COMM_WORLD_LOCAL_RANK", "1"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"},
                              {"OMPI_COMM_WORLD_NODE_RANK", "1"},  {"MASTER_ADDR", "head"}};

Environment with(Environment env, const Environment &changes) {
  for (const auto &[name, value] : changes) env[name] = value;
  return env;
}

Environment without(Environment env, std::initializer_list<const char *> names) {
  for (const char *name : names) env.erase(name);
  return env;
}

void check(const GoodCase &c) {
  LaunchEnv got;
  bootstrap_test::Outcome outcome = outcome_of([&] { got = read_launch_env(c.env); });
  if (!outcome.ok()) fail_msg("%s: unexpected error: %s", c.name, outcome.message.c_str());
  const Expect &e = c.expect;
  if (got.launcher != e.launcher) fail_msg("%s: launcher %s", c.name, launcher_name(got.launcher));
  if (got.rank != e.rank || got.world_size != e.world)
    fail_msg("%s: rank %d world %d, expected %d %d", c.name, got.rank, got.world_size, e.rank, e.world);
  if (got.master_addr != e.master_addr || got.master_port != e.master_port)
    fail_msg("%s: master %s:%d", c.name, got.master_addr.c_str(), got.master_port);
  if (got.node.has_value() != e.node.has_value()) fail_msg("%s: node presence differs", c.name);
  if (e.node) {
    const NodePlacement &a = *got.node, &b = *e.node;
    if (a.local_rank != b.local_rank || a.local_size != b.local_size || a.node_rank != b.node_rank ||
        a.node_world_size != b.node_world_size)
      fail_msg("%s: node (%d, %d, %d, %d), expected (%d, %d, %d, %d)", c.name, a.local_rank, a.local_size, a.node_rank,
               a.node_world_size, b.local_rank, b.local_size, b.node_rank, b.node_world_size);
  }
  if (got.federated_sizes != e.federated) fail_msg("%s: federated sizes differ", c.name);
}

void test_launchers(void **) {
  const GoodCase cases[] = {
      {"torchrun", kTorchrun, {Launcher::Torchrun, 5, 8, "10.0.0.1", 29400, NodePlacement{1, 4, 1, 2}, {}}},
      {"torchrun without node variables", without(kTorchrun, {"LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK", "GROUP_WORLD_SIZE"}),
       {Launcher::Torchrun, 5, 8, "10.0.0.1", 29400, {}, {}}},
      // Step nodes (SLURM_NNODES) win over the allocation's; node 1 runs 4 tasks; master = first host.
      {"slurm", kSlurm, {Launcher::Slurm, 6, 11, "gpu003", 29500, NodePlacement{2, 4, 1, 3}, {}}},
      {"slurm last node of an uneven list", with(kSlurm, {{"SLURM_PROCID", "9"}, {"SLURM_NODEID", "2"}, {"SLURM_LOCALID", "1"}}),
       {Launcher::Slurm, 9, 11, "gpu003", 29500, NodePlacement{1, 3, 2, 3}, {}}},
      {"slurm with SLURM_NTASKS_PER_NODE", with(without(kSlurm, {"SLURM_TASKS_PER_NODE"}), {{"SLURM_NTASKS", "12"}, {"SLURM_NTASKS_PER_NODE", "4"}}),
       {Launcher::Slurm, 6, 12, "gpu003", 29500, NodePlacement{2, 4, 1, 3}, {}}},
      {"slurm MASTER_ADDR and MASTER_PORT win", with(kSlurm, {{"MASTER_ADDR", "ib0-host"}, {"MASTER_PORT", "1234"}}),
       {Launcher::Slurm, 6, 11, "ib0-host", 1234, NodePlacement{2, 4, 1, 3}, {}}},
      {"slurm step node list first", with(kSlurm, {{"SLURM_STEP_NODELIST", "cn[10-11]"}}),
       {Launcher::Slurm, 6, 11, "cn10", 29500, NodePlacement{2, 4, 1, 3}, {}}},
      {"open mpi, block placement", kOpenMpi, {Launcher::OpenMpi, 5, 8, "head", 29500, NodePlacement{1, 4, 1, 2}, {}}},
      {"open mpi, cyclic placement: no node", with(kOpenMpi, {{"OMPI_COMM_WORLD_LOCAL_RANK", "2"}}),
       {Launcher::OpenMpi, 5, 8, "head", 29500, {}, {}}},
      {"xffl only", {{"XFFL_RANK", "2"}, {"XFFL_WORLD_SIZE", "3"}, {"XFFL_MASTER_ADDR", "h"}, {"XFFL_MASTER_PORT", "7"}},
       {Launcher::Xffl, 2, 3, "h", 7, {}, {}}},
  };
  for (const GoodCase &c : cases) check(c);
}

void test_precedence(void **) {
  // torchrun inside an sbatch script: SLURM_PROCID numbers the agents, torchrun's RANK the workers.
  Environment both = kTorchrun;
  for (const auto &[name, value] : kSlurm) both[name] = value;
  for (const auto &[name, value] : without(kOpenMpi, {"MASTER_ADDR"})) both[name] = value;
  const GoodCase cases[] = {
      {"torchrun over slurm and open mpi", both, {Launcher::Torchrun, 5, 8, "10.0.0.1", 29400, NodePlacement{1, 4, 1, 2}, {}}},
      // mpirun inside an sbatch script: the SLURM variables number mpirun's daemons, not the ranks.
      {"open mpi over slurm", with(kSlurm, kOpenMpi), {Launcher::OpenMpi, 5, 8, "head", 29500, NodePlacement{1, 4, 1, 2}, {}}},
      {"xffl variables replace single fields",
       with(kTorchrun, {{"XFFL_MASTER_ADDR", "override"}, {"XFFL_MASTER_PORT", "31000"}}),
       {Launcher::Torchrun, 5, 8, "override", 31000, NodePlacement{1, 4, 1, 2}, {}}},
      {"xffl rank over slurm's", with(kSlurm, {{"XFFL_RANK", "7"}, {"XFFL_LOCAL_RANK", "3"}}),
       {Launcher::Slurm, 7, 11, "gpu003", 29500, NodePlacement{3, 4, 1, 3}, {}}},
  };
  for (const GoodCase &c : cases) check(c);
}

void test_federated_sizes(void **) {
  const GoodCase cases[] = {
      {"processes list", with(kTorchrun, {{"XFFL_FEDERATED", "4,4"}}),
       {Launcher::Torchrun, 5, 8, "10.0.0.1", 29400, NodePlacement{1, 4, 1, 2}, std::vector<int>{4, 4}}},
      {"processes single value expands", with(kTorchrun, {{"XFFL_FEDERATED", "2"}}),
       {Launcher::Torchrun, 5, 8, "10.0.0.1", 29400, NodePlacement{1, 4, 1, 2}, std::vector<int>{2, 2, 2, 2}}},
      {"nodes, times ranks per node", with(kTorchrun, {{"XFFL_FEDERATED_LOCAL_WORLD_SIZE", "1"}}),
       {Launcher::Torchrun, 5, 8, "10.0.0.1", 29400, NodePlacement{1, 4, 1, 2}, std::vector<int>{4, 4}}},
      {"nodes with uneven slurm nodes", with(kSlurm, {{"XFFL_FEDERATED_LOCAL_WORLD_SIZE", "2,1"}}),
       {Launcher::Slurm, 6, 11, "gpu003", 29500, NodePlacement{2, 4, 1, 3}, std::vector<int>{8, 3}}},
      {"both agree", with(kTorchrun, {{"XFFL_FEDERATED", "4, 4"}, {"XFFL_FEDERATED_LOCAL_WORLD_SIZE", "1,1"}}),
       {Launcher::Torchrun, 5, 8, "10.0.0.1", 29400, NodePlacement{1, 4, 1, 2}, std::vector<int>{4, 4}}},
  };
  for (const GoodCase &c : cases) check(c);
}

void test_xffl_settings(void **) {
  // The options' variables (XFFL_TIMEOUT, XFFL_JOB_ID, ...) are Options::from_environment's:
  // test_env_registry.cpp.
  Environment env = with(kTorchrun, {{"XFFL_HSDP", "2"}, {"XFFL_BACKEND", "UCX"}, {"XFFL_DEVICE", "cuda"},
                                     {"XFFL_STREAMS", "3"}});
  LaunchEnv got = read_launch_env(env);
  assert_int_equal(*got.hsdp, 2);
  assert_int_equal(*got.backend, XFFL_BACKEND_UCX);
  assert_int_equal(*got.device, XFFL_DEVICE_CUDA);
  assert_int_equal(*got.streams, 3);
  assert_int_equal(*got.local_rank, 1);
  assert_int_equal(*got.local_world_size, 4);

  LaunchEnv plain = read_launch_env(kTorchrun);
  assert_false(plain.hsdp || plain.backend || plain.device || plain.streams);
  // Empty means unset.
  assert_false(read_launch_env(with(kTorchrun, {{"XFFL_BACKEND", ""}})).backend.has_value());
}

// mpirun and srun --mpi=pmix make every process a PMIx client: without MASTER_ADDR the store's
// address goes through PMIx (master_addr empty, port MASTER_PORT or 0); an explicit address wins.
void test_store_address_from_pmix(void **) {
  const Environment pmix = {{"PMIX_RANK", "5"}, {"PMIX_NAMESPACE", "1234"}};
  struct PmixCase {
    GoodCase good;
    bool from_pmix;
  };
  const PmixCase cases[] = {
      {{"open mpi with pmix", with(without(kOpenMpi, {"MASTER_ADDR"}), pmix),
        {Launcher::OpenMpi, 5, 8, "", 0, NodePlacement{1, 4, 1, 2}, {}}}, true},
      {{"open mpi with pmix and MASTER_PORT", with(without(kOpenMpi, {"MASTER_ADDR"}), with(pmix, {{"MASTER_PORT", "31000"}})),
        {Launcher::OpenMpi, 5, 8, "", 31000, NodePlacement{1, 4, 1, 2}, {}}}, true},
      {{"open mpi with pmix and XFFL_MASTER_PORT", with(without(kOpenMpi, {"MASTER_ADDR"}), with(pmix, {{"XFFL_MASTER_PORT", "31001"}})),
        {Launcher::OpenMpi, 5, 8, "", 31001, NodePlacement{1, 4, 1, 2}, {}}}, true},
      {{"open mpi MASTER_ADDR wins over pmix", with(kOpenMpi, pmix),
        {Launcher::OpenMpi, 5, 8, "head", 29500, NodePlacement{1, 4, 1, 2}, {}}}, false},
      {{"open mpi XFFL_MASTER_ADDR wins over pmix", with(without(kOpenMpi, {"MASTER_ADDR"}), with(pmix, {{"XFFL_MASTER_ADDR", "h"}})),
        {Launcher::OpenMpi, 5, 8, "h", 29500, NodePlacement{1, 4, 1, 2}, {}}}, false},
      {{"srun --mpi=pmix: pmix over the first host of the node list", with(kSlurm, pmix),
        {Launcher::Slurm, 6, 11, "", 0, NodePlacement{2, 4, 1, 3}, {}}}, true},
      {{"srun --mpi=pmix with MASTER_ADDR", with(kSlurm, with(pmix, {{"MASTER_ADDR", "ib0-host"}})),
        {Launcher::Slurm, 6, 11, "ib0-host", 29500, NodePlacement{2, 4, 1, 3}, {}}}, false},
      {{"plain srun keeps the node list", kSlurm, {Launcher::Slurm, 6, 11, "gpu003", 29500, NodePlacement{2, 4, 1, 3}, {}}},
       false},
  };
  for (const PmixCase &c : cases) {
    check(c.good);
    if (read_launch_env(c.good.env).store_address_from_pmix != c.from_pmix)
      fail_msg("%s: store_address_from_pmix is not %d", c.good.name, c.from_pmix);
  }
  // torchrun names its master itself: a PMIx server around it changes nothing.
  bootstrap_test::Outcome outcome = outcome_of([&] { read_launch_env(with(without(kTorchrun, {"MASTER_ADDR"}), pmix)); });
  assert_int_equal(outcome.status, XFFL_EINVAL);
  assert_true(contains(outcome.message, "MASTER_ADDR is not set"));
}

struct BadCase {
  const char *name;
  Environment env;
  std::vector<std::string> phrases;
};

void test_errors_name_the_variable(void **) {
  const BadCase cases[] = {
      {"nothing", {}, {"no launcher environment found", "RANK and WORLD_SIZE", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK"}},
      {"rank beyond world", with(kTorchrun, {{"RANK", "5"}, {"WORLD_SIZE", "4"}, {"LOCAL_WORLD_SIZE", "2"}}),
       {"RANK=5 but WORLD_SIZE=4"}},
      {"bad port", with(kTorchrun, {{"MASTER_PORT", "abc"}}), {"MASTER_PORT='abc' is not a port"}},
      {"port out of range", with(kTorchrun, {{"MASTER_PORT", "70000"}}), {"MASTER_PORT='70000' is not a port"}},
      {"missing world", without(kTorchrun, {"WORLD_SIZE"}), {"RANK=5 is set but WORLD_SIZE is not"}},
      {"missing master addr", without(kTorchrun, {"MASTER_ADDR"}), {"MASTER_ADDR is not set"}},
      {"missing master port", without(kTorchrun, {"MASTER_PORT"}), {"MASTER_PORT is not set"}},
      {"local pair", without(kTorchrun, {"LOCAL_WORLD_SIZE"}), {"LOCAL_RANK=1 is set but LOCAL_WORLD_SIZE is not"}},
      {"negative rank", with(kTorchrun, {{"RANK", "-1"}}), {"RANK='-1' is not a non-negative integer"}},
      {"zero world", with(kTorchrun, {{"WORLD_SIZE", "0"}}), {"WORLD_SIZE=0 must be at least 1"}},
      {"local rank beyond local size", with(kTorchrun, {{"LOCAL_RANK", "4"}}), {"LOCAL_RANK=4 but LOCAL_WORLD_SIZE=4"}},
      {"nodes times ranks", with(kTorchrun, {{"GROUP_WORLD_SIZE", "3"}, {"GROUP_RANK", "1"}}),
       {"LOCAL_WORLD_SIZE=4", "GROUP_WORLD_SIZE=3", "WORLD_SIZE=8"}},
      {"torchrun rank numbering", with(kTorchrun, {{"RANK", "6"}}),
       {"RANK=6 but GROUP_RANK=1 * LOCAL_WORLD_SIZE=4 + LOCAL_RANK=1 = 5"}},
      {"slurm tasks do not add up", with(kSlurm, {{"SLURM_NTASKS", "12"}}),
       {"SLURM_TASKS_PER_NODE='4(x2),3' adds up to 11 tasks but SLURM_NTASKS=12"}},
      {"slurm tasks list vs nodes", with(kSlurm, {{"SLURM_NNODES", "2"}, {"SLURM_NODEID", "1"}}),
       {"SLURM_TASKS_PER_NODE='4(x2),3' describes 3 nodes but SLURM_NNODES=2"}},
      {"slurm malformed node list", with(without(kSlurm, {"MASTER_ADDR"}), {{"SLURM_JOB_NODELIST", "gpu[003-005"}}),
       {"SLURM_JOB_NODELIST='gpu[003-005' is not a SLURM host list"}},
      {"slurm without ntasks", without(kSlurm, {"SLURM_NTASKS"}), {"SLURM_PROCID=6 is set but SLURM_NTASKS is not"}},
      {"slurm without any node list", without(kSlurm, {"SLURM_JOB_NODELIST"}), {"MASTER_ADDR is not set", "SLURM_NODELIST"}},
      {"open mpi without MASTER_ADDR", without(kOpenMpi, {"MASTER_ADDR"}),
       {"MASTER_ADDR is not set", "Open MPI", "without PMIx (PMIX_RANK and PMIX_NAMESPACE are not set)"}},
      {"federated sum", with(kTorchrun, {{"XFFL_FEDERATED", "4,2"}}), {"XFFL_FEDERATED='4,2' adds up to 6 processes but WORLD_SIZE=8"}},
      {"federated does not divide", with(kTorchrun, {{"XFFL_FEDERATED", "3"}}), {"XFFL_FEDERATED=3 does not divide WORLD_SIZE=8"}},
      {"federated malformed", with(kTorchrun, {{"XFFL_FEDERATED", "4,x"}}), {"XFFL_FEDERATED='4,x' is not a comma-separated list"}},
      {"federated nodes sum", with(kTorchrun, {{"XFFL_FEDERATED_LOCAL_WORLD_SIZE", "1,2"}}),
       {"XFFL_FEDERATED_LOCAL_WORLD_SIZE='1,2' adds up to 3 nodes but the job has 2"}},
      {"federated nodes without ranks per node",
       with(without(kTorchrun, {"LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK", "GROUP_WORLD_SIZE"}),
            {{"XFFL_FEDERATED_LOCAL_WORLD_SIZE", "1"}}),
       {"XFFL_FEDERATED_LOCAL_WORLD_SIZE='1' counts nodes, but the ranks per node are unknown"}},
      {"federated disagree", with(kTorchrun, {{"XFFL_FEDERATED", "2"}, {"XFFL_FEDERATED_LOCAL_WORLD_SIZE", "1"}}),
       {"XFFL_FEDERATED and XFFL_FEDERATED_LOCAL_WORLD_SIZE disagree", "(2, 2, 2, 2)", "(4, 4)"}},
      {"hsdp beyond world", with(kTorchrun, {{"XFFL_HSDP", "16"}}), {"XFFL_HSDP=16 but WORLD_SIZE=8"}},
      {"backend", with(kTorchrun, {{"XFFL_BACKEND", "gloo"}}), {"XFFL_BACKEND='gloo' is not one of none, ucx, nccl"}},
      {"device", with(kTorchrun, {{"XFFL_DEVICE", "tpu"}}), {"XFFL_DEVICE='tpu' is not one of cpu, cuda"}},
      {"streams", with(kTorchrun, {{"XFFL_STREAMS", "0"}}), {"XFFL_STREAMS=0 must be at least 1"}},
      {"master port override", with(kTorchrun, {{"XFFL_MASTER_PORT", "0"}}), {"XFFL_MASTER_PORT='0' is not a port"}},
      {"xffl override contradicts", with(kTorchrun, {{"XFFL_RANK", "9"}}), {"XFFL_RANK=9 but WORLD_SIZE=8"}},
  };
  for (const BadCase &c : cases) {
    bootstrap_test::Outcome outcome = outcome_of([&] { read_launch_env(c.env); });
    if (outcome.status != XFFL_EINVAL)
      fail_msg("%s: expected XFFL_EINVAL, got %s: %s", c.name, xffl_status_string(outcome.status), outcome.message.c_str());
    for (const std::string &phrase : c.phrases)
      if (!contains(outcome.message, phrase))
        fail_msg("%s: message \"%s\" lacks \"%s\"", c.name, outcome.message.c_str(), phrase.c_str());
  }
}

void test_process_environment_wrapper(void **) {
  setenv("XFFL_BOOTSTRAP_TEST_VARIABLE", "a=b", 1);
  Environment env = process_environment();
  assert_string_equal(env.at("XFFL_BOOTSTRAP_TEST_VARIABLE").c_str(), "a=b");
  assert_true(process_environment_has("XFFL_BOOTSTRAP_TEST_VARIABLE"));
  setenv("XFFL_BOOTSTRAP_TEST_VARIABLE", "", 1);  // present though empty, as UCX reads its own variables
  assert_true(process_environment_has("XFFL_BOOTSTRAP_TEST_VARIABLE"));
  unsetenv("XFFL_BOOTSTRAP_TEST_VARIABLE");
  assert_false(process_environment_has("XFFL_BOOTSTRAP_TEST_VARIABLE"));
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_launchers),
      cmocka_unit_test(test_precedence),
      cmocka_unit_test(test_federated_sizes),
      cmocka_unit_test(test_xffl_settings),
      cmocka_unit_test(test_store_address_from_pmix),
      cmocka_unit_test(test_errors_name_the_variable),
      cmocka_unit_test(test_process_environment_wrapper),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
