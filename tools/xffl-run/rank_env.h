// The environment each rank starts with: ours, minus the variables we set, plus torchrun's and xffl's.
#ifndef XFFL_RUN_RANK_ENV_H
#define XFFL_RUN_RANK_ENV_H

#include <string>
#include <vector>

#include "options.h"

namespace xffl_run {

// What every rank of one launch shares.
struct JobInfo {
  std::string master_addr;
  int master_port = 0;
  std::string job_id;  // TORCHELASTIC_RUN_ID and XFFL_JOB_ID
};

// "NAME=value" entries for rank `rank`. `inherited` is our own environment (environ); a variable we set
// replaces an inherited one of the same name, so a stale RANK from an outer launcher never leaks in.
// UCX_TCP_PUT_ENABLE=n and XFFL_UCX_PROCESS_SETTINGS=1 are added unless inherited (UCX 1.13's sake).
std::vector<std::string> rank_environment(const LaunchOptions& opts, const JobInfo& job, int rank,
                                          const char* const* inherited);

// A fresh random id per launch (32 hex digits).
std::string make_job_id();

}  // namespace xffl_run

#endif
