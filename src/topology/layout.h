// Validation of layout requests (DESIGN.md section 3.4). Pure: throws xffl::Error(XFFL_EINVAL) with a
// message naming the values involved and, where it can, a value that would work.
#ifndef XFFL_SRC_TOPOLOGY_LAYOUT_H
#define XFFL_SRC_TOPOLOGY_LAYOUT_H

#include <vector>

namespace xffl::topology {

void check_rank(int rank, int world_size);

// A set of ranks given in any order (a mesh, a process group): at least one, each in
// [0, world_size), none twice. Returns them sorted. `what` names the set in messages ("fsdp mesh").
std::vector<int> sorted_rank_set(int world_size, const std::vector<int> &ranks, const char *what);

// set_hsdp: 1 <= hsdp, hsdp divides the world.
void check_hsdp(int world_size, int hsdp);

// set_fsdp_mesh: at least one rank, every rank in [0, world_size), no rank twice, and rank (the
// caller) among them.
void check_fsdp_mesh(int world_size, const std::vector<int> &ranks, int rank);

// set_hsdp_manual without federated scaling (xFFL's _partial_hsdp_setup_manual, plus the caller's place
// in the row-major grid): 0 <= replica_local_rank < replica_local_size, replica_local_size divides the
// world into replica_world_size[0] replicas (one entry), 0 <= replica_rank < replicas, and
// rank == replica_rank * replica_local_size + replica_local_rank.
void check_hsdp_manual(int world_size, int rank, int replica_local_rank, int replica_local_size, int replica_rank,
                       const std::vector<int> &replica_world_size);

// A single size expands to (F, ..., F), W / F times; several sizes are returned as given.
std::vector<int> expand_federated_sizes(int world_size, const std::vector<int> &sizes);

// federated_scaling with expanded sizes: positive sizes summing to W; hsdp 0 (none) needs equal sizes;
// hsdp > 0 must divide every size.
void check_federated(int world_size, const std::vector<int> &sizes, int hsdp);

}  // namespace xffl::topology

#endif
