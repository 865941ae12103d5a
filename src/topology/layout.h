// Validation of layout requests (DESIGN.md section 3.4). Pure: throws xffl::Error(XFFL_EINVAL) with a
// message naming the values involved and, where it can, a value that would work.
#ifndef XFFL_SRC_TOPOLOGY_LAYOUT_H
#define XFFL_SRC_TOPOLOGY_LAYOUT_H

#include <vector>

namespace xffl::topology {

void check_rank(int rank, int world_size);

// set_hsdp: 1 <= hsdp, hsdp divides the world.
void check_hsdp(int world_size, int hsdp);

// A single size expands to (F, ..., F), W / F times; several sizes are returned as given.
std::vector<int> expand_federated_sizes(int world_size, const std::vector<int> &sizes);

// federated_scaling with expanded sizes: positive sizes summing to W; hsdp 0 (none) needs equal sizes;
// hsdp > 0 must divide every size.
void check_federated(int world_size, const std::vector<int> &sizes, int hsdp);

}  // namespace xffl::topology

#endif
