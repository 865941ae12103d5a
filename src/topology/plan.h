// What one rank computes about the job with no communication (DESIGN.md section 3): every field, every
// group's member list, both meshes. Cost O(G) time and memory (groups are progressions where they can be).
#ifndef XFFL_SRC_TOPOLOGY_PLAN_H
#define XFFL_SRC_TOPOLOGY_PLAN_H

#include <memory>
#include <optional>
#include <vector>

#include "topology/rank_list.h"

namespace xffl::topology {

// A device mesh: a row-major grid of consecutive global ranks starting at first_rank, or (a caller's
// 1-D mesh, xffl_set_fsdp_mesh) the ranks listed.
struct Mesh {
  std::vector<int> shape;  // ("shard",) or ("replica", "shard")
  int first_rank = 0;
  std::optional<RankList> listed;  // set for a caller's mesh; then shape is {listed->size()}
  int rank_count() const;
  RankList ranks() const { return listed ? *listed : RankList::progression(first_rank, 1, rank_count()); }
};

struct RankPlan {
  int rank = 0;
  int world_size = 0;
  int hsdp = 0;  // S, 0 without HSDP

  std::optional<int> replica_local_rank, replica_local_size, replica_rank;
  std::vector<int> replica_world_size;  // empty: None

  std::optional<int> federated_local_rank, federated_rank, federated_world_size;
  std::shared_ptr<const std::vector<int>> federated_local_size;  // null: None

  std::optional<bool> is_sender;
  std::optional<int> receive_from;

  std::optional<Mesh> fsdp_mesh, hsdp_mesh;

  std::optional<RankList> fsdp_group;          // the ranks of fsdp_mesh
  std::optional<RankList> hsdp_replica_group;  // column of the HSDP mesh
  std::optional<RankList> hsdp_shard_group;    // row of the HSDP mesh
  std::optional<RankList> federated_group;
  std::optional<RankList> replica_group;
  std::optional<RankList> federation;
};

// FSDP over the whole world.
RankPlan plan_fsdp(int world_size, int rank);

// HSDP with replicas of hsdp ranks (validated).
RankPlan plan_hsdp(int world_size, int hsdp, int rank);

// FSDP over a caller's mesh (xffl_set_fsdp_mesh): ranks validated (layout.h check_fsdp_mesh), the
// group and mesh in sorted order, as torch's new_group orders a process group.
RankPlan plan_fsdp_mesh(int world_size, const std::vector<int> &ranks, int rank);

// Federated scaling. sizes already expanded and validated (layout.h); hsdp 0 means none.
RankPlan plan_federated(int world_size, std::shared_ptr<const std::vector<int>> sizes, int hsdp, int rank);

// The sender of shard p in federated group g: C_g[p] = O_g + (p mod R_g) * S + p.
int sender_of(int group_offset, int replicas, int hsdp, int shard);

// The senders C_g of federated group g (xFFL's _get_communicating_processes): C_g[p] for every shard p
// < S. Without HSDP (hsdp 0) every rank of the group is a sender: O_g .. O_g + F_g - 1. sizes expanded
// and validated; g in [0, G).
std::vector<int> communicating_processes(const std::vector<int> &sizes, int hsdp, int group);

}  // namespace xffl::topology

#endif
