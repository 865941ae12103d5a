// xffl-run gives every rank torchrun's variables and xffl's, correct for each rank.
#include <fstream>
#include <map>
#include <set>
#include <string>

#include "run_harness.h"
#include "cmocka_cpp.h"  // last

using namespace run_test;

namespace {

using Vars = std::map<std::string, std::string>;

// Parses every "[r] env NAME=value ..." line into rank -> variables; fails on any other stdout line.
std::map<int, Vars> collect_env(const Outcome& outcome) {
  std::map<int, Vars> by_rank;
  for (const std::string& line : split_lines(outcome.out)) {
    int rank = -1;
    int consumed = 0;
    if (std::sscanf(line.c_str(), "[%d] env%n", &rank, &consumed) != 1 || consumed == 0)
      fail_msg("unexpected stdout line: '%s'", line.c_str());
    if (by_rank.count(rank)) fail_msg("rank %d printed its environment twice", rank);
    Vars vars;
    std::string rest = line.substr(static_cast<std::size_t>(consumed));
    std::string::size_type start = 0;
    while ((start = rest.find_first_not_of(' ', start)) != std::string::npos) {
      std::string::size_type end = rest.find(' ', start);
      std::string item = rest.substr(start, end == std::string::npos ? std::string::npos : end - start);
      vars[item.substr(0, item.find('='))] = item.substr(item.find('=') + 1);
      start = end;
    }
    by_rank[rank] = vars;
  }
  return by_rank;
}

void expect(const Vars& vars, int rank, const std::string& name, const std::string& expected) {
  auto found = vars.find(name);
  std::string actual = found == vars.end() ? "<missing>" : found->second;
  if (actual != expected)
    fail_msg("rank %d: %s is '%s', expected '%s'", rank, name.c_str(), actual.c_str(), expected.c_str());
}

// Runs N ranks on M simulated nodes and checks every rank's torchrun variables.
std::map<int, Vars> check_layout(int world, int nodes, const std::vector<std::string>& extra_args = {}) {
  std::vector<std::string> args{"-n", std::to_string(world), "--nodes", std::to_string(nodes)};
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  args.insert(args.end(), {"--", probe_path(), "env"});
  Outcome outcome = run_launcher(args);
  assert_int_equal(outcome.exit_code, 0);
  assert_string_equal(outcome.err.c_str(), "");
  std::map<int, Vars> by_rank = collect_env(outcome);
  assert_int_equal(by_rank.size(), world);

  const int local = world / nodes;
  const std::string port = by_rank[0]["MASTER_PORT"];
  const std::string job = by_rank[0]["XFFL_JOB_ID"];
  int port_number = std::atoi(port.c_str());
  if (port_number < 1 || port_number > 65535) fail_msg("MASTER_PORT '%s' is not a port", port.c_str());
  // Drawn below the kernel's ephemeral range, where no outgoing connection takes it before rank 0 binds.
  std::ifstream range("/proc/sys/net/ipv4/ip_local_port_range");
  int ephemeral_low = 0, ephemeral_high = 0;
  if (range >> ephemeral_low >> ephemeral_high && ephemeral_low > 20064 && port_number >= ephemeral_low)
    fail_msg("MASTER_PORT %d is in the ephemeral range %d-%d", port_number, ephemeral_low, ephemeral_high);
  if (job.size() != 32 || job.find_first_not_of("0123456789abcdef") != std::string::npos)
    fail_msg("XFFL_JOB_ID '%s' is not 32 hex digits", job.c_str());
  for (int rank = 0; rank < world; ++rank) {
    if (!by_rank.count(rank)) fail_msg("rank %d printed nothing", rank);
    const Vars& vars = by_rank[rank];
    expect(vars, rank, "RANK", std::to_string(rank));
    expect(vars, rank, "WORLD_SIZE", std::to_string(world));
    expect(vars, rank, "LOCAL_RANK", std::to_string(rank % local));
    expect(vars, rank, "LOCAL_WORLD_SIZE", std::to_string(local));
    expect(vars, rank, "GROUP_RANK", std::to_string(rank / local));
    expect(vars, rank, "GROUP_WORLD_SIZE", std::to_string(nodes));
    expect(vars, rank, "ROLE_RANK", std::to_string(rank));
    expect(vars, rank, "ROLE_WORLD_SIZE", std::to_string(world));
    expect(vars, rank, "MASTER_ADDR", "127.0.0.1");
    expect(vars, rank, "MASTER_PORT", port);  // the same port for everyone
    expect(vars, rank, "XFFL_JOB_ID", job);
    expect(vars, rank, "TORCHELASTIC_RUN_ID", job);
  }
  return by_rank;
}

void single_node_layouts(void**) {
  for (int world : {1, 2, 4, 8}) {
    std::map<int, Vars> by_rank = check_layout(world, 1);
    // Nothing was asked of xffl, so nothing of xffl's is set.
    for (const char* name : {"XFFL_FEDERATED", "XFFL_HSDP", "XFFL_BACKEND", "XFFL_STREAMS", "XFFL_TIMEOUT"})
      expect(by_rank[0], 0, name, "<unset>");
  }
}

void simulated_nodes(void**) {
  check_layout(4, 2);
  check_layout(8, 2);
  check_layout(8, 4);
  check_layout(8, 8);
}

void xffl_variables_as_given(void**) {
  std::map<int, Vars> by_rank = check_layout(
      8, 2, {"--federated", "2,6", "--hsdp", "2", "--backend", "ucx", "--streams", "3", "--timeout", "2.5"});
  for (const auto& entry : by_rank) {
    expect(entry.second, entry.first, "XFFL_FEDERATED", "2,6");
    expect(entry.second, entry.first, "XFFL_HSDP", "2");
    expect(entry.second, entry.first, "XFFL_BACKEND", "ucx");
    expect(entry.second, entry.first, "XFFL_STREAMS", "3");
    expect(entry.second, entry.first, "XFFL_TIMEOUT", "2.5");
  }
  by_rank = check_layout(4, 1, {"--federated=2", "--backend=none"});
  expect(by_rank[3], 3, "XFFL_FEDERATED", "2");
  expect(by_rank[3], 3, "XFFL_BACKEND", "none");
}

void inherited_environment(void**) {
  // Our own variables reach the ranks; stale launcher variables are replaced, and a federation in
  // nodes from outside cannot contradict the one given in processes.
  Outcome outcome = run_launcher({"-n", "2", "--federated", "1", "--", probe_path(), "env"},
                                 {"XFFL_PROBE_INHERITED=yes", "RANK=77", "WORLD_SIZE=99", "MASTER_PORT=1",
                                  "XFFL_FEDERATED_LOCAL_WORLD_SIZE=5", "XFFL_HSDP=4"});
  assert_int_equal(outcome.exit_code, 0);
  std::map<int, Vars> by_rank = collect_env(outcome);
  assert_int_equal(by_rank.size(), 2);
  for (int rank = 0; rank < 2; ++rank) {
    expect(by_rank[rank], rank, "XFFL_PROBE_INHERITED", "yes");
    expect(by_rank[rank], rank, "RANK", std::to_string(rank));
    expect(by_rank[rank], rank, "WORLD_SIZE", "2");
    expect(by_rank[rank], rank, "XFFL_FEDERATED_LOCAL_WORLD_SIZE", "<unset>");
    expect(by_rank[rank], rank, "XFFL_HSDP", "4");  // not given here: the caller's value stands
  }
  if (by_rank[0]["MASTER_PORT"] == "1") fail_msg("the inherited MASTER_PORT=1 leaked into the ranks");
}

void master_address_and_port_given(void**) {
  Outcome outcome =
      run_launcher({"-n", "2", "--master-addr", "localhost", "--master-port", "29511", "--", probe_path(), "env"});
  assert_int_equal(outcome.exit_code, 0);
  std::map<int, Vars> by_rank = collect_env(outcome);
  for (int rank = 0; rank < 2; ++rank) {
    expect(by_rank[rank], rank, "MASTER_ADDR", "localhost");
    expect(by_rank[rank], rank, "MASTER_PORT", "29511");
  }
}

void fresh_job_id_per_launch(void**) {
  std::set<std::string> ids;
  for (int launch = 0; launch < 3; ++launch) {
    Outcome outcome = run_launcher({"-n", "1", "--", probe_path(), "env"});
    assert_int_equal(outcome.exit_code, 0);
    ids.insert(collect_env(outcome)[0]["XFFL_JOB_ID"]);
  }
  assert_int_equal(ids.size(), 3);
}

// --facility / --federation: one facility's job of a federation. The job id names the federation, so it
// is the inherited XFFL_JOB_ID, else "xffl": never a fresh one (every facility's job must share it).
void facility_job(void**) {
  const std::vector<std::string> args = {"-n", "2", "--federated", "2,4", "--facility", "0", "--federation",
                                         "xffl://127.0.0.1:29600", "--", probe_path(), "env"};
  Outcome outcome = run_launcher(args);
  assert_int_equal(outcome.exit_code, 0);
  std::map<int, Vars> by_rank = collect_env(outcome);
  assert_int_equal(by_rank.size(), 2);
  for (int rank = 0; rank < 2; ++rank) {
    expect(by_rank[rank], rank, "RANK", std::to_string(rank));
    expect(by_rank[rank], rank, "WORLD_SIZE", "2");
    expect(by_rank[rank], rank, "XFFL_FEDERATED", "2,4");
    expect(by_rank[rank], rank, "XFFL_FACILITY", "0");
    expect(by_rank[rank], rank, "XFFL_FEDERATION", "xffl://127.0.0.1:29600");
    expect(by_rank[rank], rank, "XFFL_JOB_ID", "xffl");
  }
  outcome = run_launcher(args, {"XFFL_JOB_ID=federation-7"});
  assert_int_equal(outcome.exit_code, 0);
  expect(collect_env(outcome)[1], 1, "XFFL_JOB_ID", "federation-7");
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(single_node_layouts),
      cmocka_unit_test(simulated_nodes),
      cmocka_unit_test(xffl_variables_as_given),
      cmocka_unit_test(inherited_environment),
      cmocka_unit_test(master_address_and_port_given),
      cmocka_unit_test(fresh_job_id_per_launch),
      cmocka_unit_test(facility_job),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
