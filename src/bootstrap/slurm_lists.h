// SLURM's compressed lists: host lists ("gpu[003-005,007],login1") and task counts per node
// ("4(x2),3"). Malformed text is an xffl::Error(XFFL_EINVAL) that quotes the variable.
#ifndef XFFL_SRC_BOOTSTRAP_SLURM_LISTS_H
#define XFFL_SRC_BOOTSTRAP_SLURM_LISTS_H

#include <cstddef>
#include <string>
#include <vector>

namespace xffl::bootstrap {

// Every host, in SLURM's order: "gpu[003-005,007],login1" -> gpu003 gpu004 gpu005 gpu007 login1;
// "r[1-2]n[1-2]" -> r1n1 r1n2 r2n1 r2n2 (the leftmost bracket varies slowest); ranges keep the
// zero padding of their lower bound. Throws when the list would exceed `limit` hosts.
std::vector<std::string> expand_slurm_hostlist(const std::string &text, const std::string &variable,
                                               size_t limit = 1 << 20);

// The first host, without expanding the rest: where SLURM places rank 0 of a block-distributed step.
std::string first_slurm_host(const std::string &text, const std::string &variable);

// "4(x2),3" -> 4 4 3. Throws beyond `limit` entries.
std::vector<int> expand_slurm_tasks_per_node(const std::string &text, const std::string &variable,
                                             size_t limit = 1 << 20);

}  // namespace xffl::bootstrap

#endif
