#include "rank_env.h"

#include <algorithm>
#include <cstdio>
#include <random>
#include <utility>

namespace xffl_run {

std::vector<std::string> rank_environment(const LaunchOptions& opts, const JobInfo& job, int rank,
                                          const char* const* inherited) {
  const int local_world_size = opts.nproc / opts.nodes;
  std::vector<std::pair<std::string, std::string>> ours = {
      {"RANK", std::to_string(rank)},
      {"WORLD_SIZE", std::to_string(opts.nproc)},
      {"LOCAL_RANK", std::to_string(rank % local_world_size)},
      {"LOCAL_WORLD_SIZE", std::to_string(local_world_size)},
      {"GROUP_RANK", std::to_string(rank / local_world_size)},
      {"GROUP_WORLD_SIZE", std::to_string(opts.nodes)},
      {"ROLE_NAME", "default"},
      {"ROLE_RANK", std::to_string(rank)},
      {"ROLE_WORLD_SIZE", std::to_string(opts.nproc)},
      {"MASTER_ADDR", job.master_addr},
      {"MASTER_PORT", std::to_string(job.master_port)},
      {"TORCHELASTIC_RUN_ID", job.job_id},
      {"TORCHELASTIC_RESTART_COUNT", "0"},
      {"TORCHELASTIC_MAX_RESTARTS", "0"},
      {"XFFL_JOB_ID", job.job_id},
  };
  if (opts.federated) ours.emplace_back("XFFL_FEDERATED", *opts.federated);
  if (opts.hsdp) ours.emplace_back("XFFL_HSDP", std::to_string(*opts.hsdp));
  if (opts.facility) ours.emplace_back("XFFL_FACILITY", std::to_string(*opts.facility));
  if (opts.federation) ours.emplace_back("XFFL_FEDERATION", *opts.federation);
  if (opts.backend) ours.emplace_back("XFFL_BACKEND", *opts.backend);
  if (opts.streams) ours.emplace_back("XFFL_STREAMS", std::to_string(*opts.streams));
  if (opts.timeout) ours.emplace_back("XFFL_TIMEOUT", *opts.timeout);

  std::vector<std::string> dropped;
  for (const auto& entry : ours) dropped.push_back(entry.first);
  // An inherited federation in nodes would contradict the one given here in processes.
  if (opts.federated) dropped.push_back("XFFL_FEDERATED_LOCAL_WORLD_SIZE");

  std::vector<std::string> env;
  for (const char* const* entry = inherited; entry && *entry; ++entry) {
    std::string text = *entry;
    std::string name = text.substr(0, text.find('='));
    if (std::find(dropped.begin(), dropped.end(), name) == dropped.end()) env.push_back(std::move(text));
  }
  for (const auto& entry : ours) env.push_back(entry.first + "=" + entry.second);
  // Defaults for UCX 1.13 that only the environment can carry, each kept as the user set it: TCP put-zcopy
  // off (UCX aborts the process when a peer dies mid-put), and XFFL_UCX_PROCESS_SETTINGS=1, which lets
  // the library install its UCX log handler (a peer on this host dying during a CMA copy is then an
  // error, not an abort of the survivors; see XFFL_OPT_UCX_PROCESS_SETTINGS in xffl/types.h).
  for (const char* entry : {"UCX_TCP_PUT_ENABLE=n", "XFFL_UCX_PROCESS_SETTINGS=1"}) {
    const std::string name = std::string(entry).substr(0, std::string(entry).find('='));
    const bool set = std::any_of(env.begin(), env.end(), [&](const std::string& text) {
      return text.compare(0, name.size() + 1, name + "=") == 0;
    });
    if (!set) env.emplace_back(entry);
  }
  return env;
}

std::string make_job_id() {
  std::random_device entropy;  // /dev/urandom or the CPU's generator on glibc
  std::string id;
  for (int word = 0; word < 4; ++word) {
    char hex[9];
    std::snprintf(hex, sizeof hex, "%08x", static_cast<unsigned>(entropy()));
    id += hex;
  }
  return id;
}

}  // namespace xffl_run
