// How one rank gets the communicator of its group in a group family (the FSDP groups, the HSDP
// replica groups, the K instances of the federated groups, ...). Pure: no NCCL here.
//
// A family partitions the world (every rank is in exactly one of its groups), so every rank calls
// ncclCommSplit once per family on the world communicator, with colour = the first member of its
// group and key = its index in the group (NCCL ranks then follow the group's member order). Two
// exceptions keep communicators few: a group of one needs none, and a group whose members and stream
// instance equal those of a communicator made before shares it (HSDP_REPLICA and REPLICA instance 0,
// FEDERATION and the FSDP group of federated scaling). Both still take part in the family's split
// with NCCL_SPLIT_NOCOLOR, since the split is collective over the whole world. Only a family whose
// group is the whole world skips the split: then every rank knows every other rank's decision.
// Because families partition the world, every member of a group reaches the same decision.
#ifndef XFFL_SRC_COMM_NCCL_FAMILY_PLAN_H
#define XFFL_SRC_COMM_NCCL_FAMILY_PLAN_H

#include "topology/rank_list.h"

namespace xffl::comm::nccl {

enum class FamilyRoute {
  kShare,  // use the existing communicator with the same members and instance
  kSplit,  // a new communicator from the split
  kAlone,  // a group of one: device copies, no communicator
};

struct FamilyDecision {
  FamilyRoute route = FamilyRoute::kSplit;
  bool call_split = true;  // take part in the family's ncclCommSplit
  int color = 0;           // kSplitNoColor when the split makes nothing for this rank
  int key = 0;
};

FamilyDecision decide_family(const topology::RankList &members, int my_index, int world_size,
                             bool same_members_exist);

}  // namespace xffl::comm::nccl

#endif
