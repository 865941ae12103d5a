// The command line of xffl-run, parsed and validated before anything starts.
#ifndef XFFL_RUN_OPTIONS_H
#define XFFL_RUN_OPTIONS_H

#include <optional>
#include <string>
#include <vector>

namespace xffl_run {

struct LaunchOptions {
  int nproc = 0;  // -n: total processes (ranks)
  int nodes = 1;  // --nodes: simulated nodes; divides nproc
  // Optional settings are handed to the ranks as XFFL_* variables exactly as given, so they stay
  // unset (and inherited from our own environment) when not given.
  std::optional<std::string> federated;  // XFFL_FEDERATED: "F" or "F1,F2,..", in processes
  std::optional<int> hsdp;
  std::optional<std::string> backend;  // none | ucx | nccl
  std::optional<int> streams;
  std::optional<std::string> timeout;  // seconds, as written
  // Facility mode: this job is facility `facility` of the federation whose store is `federation`
  // (XFFL_FACILITY, XFFL_FEDERATION); --federated then lists every facility's size and -n is this one's.
  std::optional<int> facility;
  std::optional<std::string> federation;
  double grace_seconds = 5.0;
  std::optional<double> max_time_seconds;
  std::string master_addr = "127.0.0.1";
  std::optional<int> master_port;
  bool tag_output = true;
  // --bind core: rank r runs on the (r mod K)-th of the K CPUs xffl-run itself may run on (its
  // affinity, inherited from whoever started it: a batch system's allocation, taskset). Off by default.
  bool bind_cores = false;
  bool show_help = false;
  // --help-env: the table of XFFL_* variables the library reads ("text"), or "markdown" (README.md's).
  std::optional<std::string> show_help_env;
  std::vector<std::string> command;  // PROG ARGS...
};

// Throws UsageError with a one-line message naming the option and the offending value.
LaunchOptions parse_options(int argc, const char* const* argv);

const char* usage_text();

}  // namespace xffl_run

#endif
