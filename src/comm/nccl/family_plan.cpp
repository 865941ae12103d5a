#include "comm/nccl/family_plan.h"

#include "comm/nccl/nccl_api.h"
#include "common/error.h"

namespace xffl::comm::nccl {

FamilyDecision decide_family(const topology::RankList &members, int my_index, int world_size,
                             bool same_members_exist) {
  const int size = members.size();
  if (size < 1 || size > world_size || my_index < 0 || my_index >= size)
    fail(XFFL_EINTERNAL, "family group of ", size, " members with index ", my_index, " in a world of ", world_size);
  FamilyDecision decision;
  decision.key = my_index;
  const bool whole_world = size == world_size;
  if (same_members_exist) {
    decision.route = FamilyRoute::kShare;
    decision.call_split = !whole_world;
    decision.color = kSplitNoColor;
  } else if (size == 1 && !whole_world) {
    decision.route = FamilyRoute::kAlone;
    decision.color = kSplitNoColor;
  } else {
    decision.route = FamilyRoute::kSplit;
    decision.color = members.at(0);
  }
  return decision;
}

}  // namespace xffl::comm::nccl
