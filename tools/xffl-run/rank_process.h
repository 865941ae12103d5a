// Starting one rank: fork, its own process group, pipes for its output, exec with its environment.
#ifndef XFFL_RUN_RANK_PROCESS_H
#define XFFL_RUN_RANK_PROCESS_H

#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

#include "fd.h"
#include "signal_watch.h"

namespace xffl_run {

struct StartedRank {
  pid_t pid = -1;  // also its process group id
  UniqueFd stdout_read;  // non-blocking
  UniqueFd stderr_read;  // non-blocking
};

// Returns once the rank's exec succeeded. If exec fails the child is reaped and ExecError says why,
// so a missing program leaves no process behind. stdin is /dev/null: a rank in a background process
// group that read the terminal would be stopped by SIGTTIN. cpu: the one CPU the rank may run on,
// set before exec (so the program sees it from its first instruction); a CPU the kernel refuses is
// an ExecError too.
StartedRank start_rank(const std::vector<std::string>& command, const std::vector<std::string>& environment,
                       const SignalWatch& signals, std::optional<int> cpu = std::nullopt);

// The CPUs this process may run on (sched_getaffinity), in increasing order.
std::vector<int> allowed_cpus();

}  // namespace xffl_run

#endif
