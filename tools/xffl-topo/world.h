// The plan of a whole world as xffl-topo draws it: one RankInfo per rank, the distinct groups of each
// kind, and the facilities (federated groups; the whole world when there is no federation).
#ifndef XFFL_TOOLS_TOPO_WORLD_H
#define XFFL_TOOLS_TOPO_WORLD_H

#include <array>
#include <optional>
#include <vector>

#include <xffl.h>

namespace xffl_topo {

// The group kinds shown by the tool, in table order. WORLD is left out: it is always every rank.
enum GroupColumn { kFsdp, kHsdpReplica, kHsdpShard, kFederated, kReplica, kFederation, kGroupColumns };

xffl_group_kind_t group_kind(GroupColumn column);
const char *group_column_name(GroupColumn column);

// Groups of one kind partition the world (DESIGN.md section 3.2), so each distinct member list is kept
// once and every rank points at its own.
struct GroupTable {
  std::vector<std::vector<int>> groups;
  std::vector<int> group_of_rank;  // index into groups, -1 where the rank has no group of this kind
  bool present() const { return !groups.empty(); }
  const std::vector<int> *of(int rank) const {
    const int id = group_of_rank[static_cast<std::size_t>(rank)];
    return id < 0 ? nullptr : &groups[static_cast<std::size_t>(id)];
  }
};

struct RankInfo {
  int rank = 0;
  std::optional<int> node_local_rank, node_rank;
  std::optional<int> federated_local_rank, federated_rank;
  std::optional<int> replica_local_rank, replica_rank;
  std::optional<bool> is_sender;
  std::optional<int> receive_from;
};

// A facility drawn as its mesh: rows are replicas, columns are shards (a 1-D FSDP mesh is one row).
struct Facility {
  int index = 0;
  int first_rank = 0;
  int rows = 1, cols = 1;
  int size() const { return rows * cols; }
};

struct World {
  int world_size = 0;
  std::optional<int> node_size;
  std::optional<int> hsdp;          // S when the layout has an HSDP mesh
  std::vector<int> federated_sizes; // expanded; empty without federated scaling
  std::vector<int> replica_world_size;
  int streams = 1;
  std::vector<RankInfo> ranks;
  std::array<GroupTable, kGroupColumns> groups;
  std::vector<Facility> facilities;

  bool federated() const { return !federated_sizes.empty(); }
  // The FEDERATED groups with more than one member: the traffic that leaves a facility.
  std::vector<const std::vector<int> *> crossing_groups() const;
  // Ranks that are in a crossing group, ascending.
  std::vector<int> crossing_ranks() const;
  const Facility &facility_of(int rank) const;
};

}  // namespace xffl_topo

#endif
