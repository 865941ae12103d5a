#include "world.h"

#include <algorithm>

namespace xffl_topo {

xffl_group_kind_t group_kind(GroupColumn column) {
  switch (column) {
    case kFsdp: return XFFL_GROUP_FSDP;
    case kHsdpReplica: return XFFL_GROUP_HSDP_REPLICA;
    case kHsdpShard: return XFFL_GROUP_HSDP_SHARD;
    case kFederated: return XFFL_GROUP_FEDERATED;
    case kReplica: return XFFL_GROUP_REPLICA;
    case kFederation: return XFFL_GROUP_FEDERATION;
    case kGroupColumns: break;
  }
  return XFFL_GROUP_WORLD;
}

const char *group_column_name(GroupColumn column) {
  switch (column) {
    case kFsdp: return "FSDP";
    case kHsdpReplica: return "HSDP_REPLICA";
    case kHsdpShard: return "HSDP_SHARD";
    case kFederated: return "FEDERATED";
    case kReplica: return "REPLICA";
    case kFederation: return "FEDERATION";
    case kGroupColumns: break;
  }
  return "?";
}

std::vector<const std::vector<int> *> World::crossing_groups() const {
  std::vector<const std::vector<int> *> crossing;
  for (const auto &group : groups[kFederated].groups)
    if (group.size() > 1) crossing.push_back(&group);
  return crossing;
}

std::vector<int> World::crossing_ranks() const {
  std::vector<int> crossing;
  for (const auto *group : crossing_groups()) crossing.insert(crossing.end(), group->begin(), group->end());
  std::sort(crossing.begin(), crossing.end());
  return crossing;
}

const Facility &World::facility_of(int rank) const {
  const int index = ranks[static_cast<std::size_t>(rank)].federated_rank.value_or(0);
  return facilities[static_cast<std::size_t>(index)];
}

}  // namespace xffl_topo
