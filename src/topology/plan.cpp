#include "topology/plan.h"

#include <algorithm>
#include <utility>

#include "common/error.h"
#include "topology/layout.h"

namespace xffl::topology {

int Mesh::rank_count() const {
  int count = 1;
  for (int extent : shape) count *= extent;
  return count;
}

int sender_of(int group_offset, int replicas, int hsdp, int shard) {
  return group_offset + (shard % replicas) * hsdp + shard;
}

RankPlan plan_fsdp(int world_size, int rank) {
  check_rank(rank, world_size);
  RankPlan plan;
  plan.rank = rank;
  plan.world_size = world_size;
  plan.fsdp_mesh = Mesh{{world_size}, 0, std::nullopt};
  plan.fsdp_group = plan.fsdp_mesh->ranks();
  return plan;
}

RankPlan plan_fsdp_mesh(int world_size, const std::vector<int> &ranks, int rank) {
  check_rank(rank, world_size);
  check_fsdp_mesh(world_size, ranks, rank);
  std::vector<int> sorted = ranks;
  std::sort(sorted.begin(), sorted.end());
  const int size = static_cast<int>(sorted.size());
  // Consecutive ranks stay a progression: O(1) memory for a mesh of a whole facility.
  const bool consecutive = sorted.back() - sorted.front() == size - 1;
  RankList members =
      consecutive ? RankList::progression(sorted.front(), 1, size) : RankList::explicit_ranks(std::move(sorted));
  RankPlan plan;
  plan.rank = rank;
  plan.world_size = world_size;
  plan.fsdp_mesh = Mesh{{size}, members.at(0), members};
  plan.fsdp_group = std::move(members);
  return plan;
}

std::vector<int> communicating_processes(const std::vector<int> &sizes, int hsdp, int group) {
  int offset = 0;  // O_g
  for (int g = 0; g < group; ++g) offset += sizes[static_cast<size_t>(g)];
  const int size = sizes[static_cast<size_t>(group)];
  std::vector<int> senders;
  if (hsdp == 0) {
    senders.reserve(static_cast<size_t>(size));
    for (int p = 0; p < size; ++p) senders.push_back(offset + p);
    return senders;
  }
  senders.reserve(static_cast<size_t>(hsdp));
  for (int p = 0; p < hsdp; ++p) senders.push_back(sender_of(offset, size / hsdp, hsdp, p));
  return senders;
}

RankPlan plan_hsdp(int world_size, int hsdp, int rank) {
  check_rank(rank, world_size);
  check_hsdp(world_size, hsdp);
  const int replicas = world_size / hsdp;
  RankPlan plan;
  plan.rank = rank;
  plan.world_size = world_size;
  plan.hsdp = hsdp;
  plan.replica_local_rank = rank % hsdp;
  plan.replica_local_size = hsdp;
  plan.replica_rank = rank / hsdp;
  plan.replica_world_size = {replicas};
  plan.hsdp_mesh = Mesh{{replicas, hsdp}, 0, std::nullopt};
  plan.hsdp_replica_group = RankList::progression(rank % hsdp, hsdp, replicas);
  plan.hsdp_shard_group = RankList::progression((rank / hsdp) * hsdp, 1, hsdp);
  return plan;
}

RankPlan plan_federated(int world_size, std::shared_ptr<const std::vector<int>> sizes_ptr, int hsdp, int rank) {
  check_rank(rank, world_size);
  const std::vector<int> &sizes = *sizes_ptr;
  check_federated(world_size, sizes, hsdp);
  const int groups = static_cast<int>(sizes.size());

  // f = the index with O_f <= r < O_f + F_f
  int group = 0, offset = 0;
  while (rank >= offset + sizes[static_cast<size_t>(group)]) offset += sizes[static_cast<size_t>(group++)];
  const int size = sizes[static_cast<size_t>(group)];
  const int local_rank = rank - offset;

  RankPlan plan;
  plan.rank = rank;
  plan.world_size = world_size;
  plan.hsdp = hsdp;
  plan.federated_local_rank = local_rank;
  plan.federated_rank = group;
  plan.federated_world_size = groups;
  plan.federated_local_size = std::move(sizes_ptr);
  plan.federation = RankList::progression(offset, 1, size);

  bool symmetric = true;
  for (int s : sizes) symmetric = symmetric && s == sizes[0];

  if (hsdp == 0) {  // symmetric FSDP federation (validated: all sizes equal)
    plan.is_sender = true;
    plan.fsdp_mesh = Mesh{{size}, offset, std::nullopt};
    plan.fsdp_group = plan.fsdp_mesh->ranks();
    plan.federated_group = RankList::progression(local_rank, size, groups);
    return plan;
  }

  const int shard = rank % hsdp;  // equal to local_rank % hsdp since hsdp divides every O_f
  const int replica = local_rank / hsdp;
  const int replicas = size / hsdp;
  plan.replica_local_rank = shard;
  plan.replica_local_size = hsdp;
  plan.replica_rank = replica;
  plan.replica_world_size.reserve(sizes.size());
  for (int s : sizes) plan.replica_world_size.push_back(s / hsdp);
  plan.hsdp_mesh = Mesh{{replicas, hsdp}, offset, std::nullopt};
  plan.hsdp_replica_group = RankList::progression(offset + shard, hsdp, replicas);
  plan.hsdp_shard_group = RankList::progression(offset + replica * hsdp, 1, hsdp);
  plan.replica_group = plan.hsdp_replica_group;

  const int sender = sender_of(offset, replicas, hsdp, shard);
  plan.is_sender = rank == sender;
  if (rank != sender) plan.receive_from = sender;

  if (symmetric) {  // every replica crosses: {g*F + replica_rank*S + replica_local_rank : g < G}
    plan.federated_group = RankList::progression(local_rank, size, groups);
  } else if (rank == sender) {  // (C_0[p], ..., C_{G-1}[p])
    std::vector<int> members;
    members.reserve(sizes.size());
    int group_offset = 0;
    for (int s : sizes) {
      members.push_back(sender_of(group_offset, s / hsdp, hsdp, shard));
      group_offset += s;
    }
    plan.federated_group = RankList::explicit_ranks(std::move(members));
  } else {
    plan.federated_group = RankList::progression(rank, 1, 1);
  }
  return plan;
}

}  // namespace xffl::topology
