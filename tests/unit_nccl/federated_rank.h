// One thread-rank's part in federated averaging on the NCCL backend, made as the state makes it: the
// FEDERATED and REPLICA families prepared (collective: every rank, same order), their communicators,
// and the roles. Shared by the weighted/bucketed tests and the crossing (UCX-staged) tests.
#ifndef XFFL_TESTS_UNIT_NCCL_FEDERATED_RANK_H
#define XFFL_TESTS_UNIT_NCCL_FEDERATED_RANK_H

#include <memory>
#include <vector>

#include "federated/registry.h"
#include "federated/strategy.h"
#include "nccl_harness.h"
#include "topology/plan.h"

namespace harness {

struct FederatedRank {
  std::unique_ptr<xffl::comm::Communicator> federated, replica;
  const xffl::federated::Strategy *strategy = nullptr;  // HIERARCHICAL
  xffl::federated::Roles roles;
};

// The two communicators, as the state hands them to a strategy.
class TwoGroups final : public xffl::federated::Groups {
 public:
  explicit TwoGroups(FederatedRank &made) : made_(made) {}
  xffl::comm::Communicator &federated() override { return *made_.federated; }
  xffl::comm::Communicator &replica() override { return *made_.replica; }

 private:
  FederatedRank &made_;
};

// weights: empty for the plain mean. crossing: mark the FEDERATED family as crossing facilities.
inline FederatedRank make_federated_rank(xffl::comm::NcclBackend &backend, int rank, int world,
                                         const std::vector<int> &sizes, int hsdp, const std::vector<double> &weights,
                                         bool crossing = false) {
  using namespace xffl;
  const topology::RankPlan plan =
      topology::plan_federated(world, std::make_shared<const std::vector<int>>(sizes), hsdp, rank);
  backend.select_device(-1, rank, 1);
  backend.register_world(spec_of(topology::RankList::progression(0, 1, world), rank, "world group", 1));
  comm::GroupSpec federated = spec_of(*plan.federated_group, rank, "federated group", 10);
  federated.crosses_facilities = crossing;
  const comm::GroupSpec replica = spec_of(*plan.replica_group, rank, "replica group", 11);
  backend.prepare_family(federated, 0);
  backend.prepare_family(replica, 0);
  FederatedRank made;
  made.federated = backend.create_communicator(federated);
  made.replica = backend.create_communicator(replica);
  // The roles from the plan's numbers, as DistributedState::federated_averaging hands them over.
  federated::Placement placement;
  placement.federated_groups = *plan.federated_world_size;
  placement.federated_rank = *plan.federated_rank;
  placement.is_sender = *plan.is_sender;
  placement.hsdp = true;
  placement.sender_index = plan.replica_group->index_of(plan.receive_from.value_or(rank));
  placement.federated_sizes = sizes;
  placement.weights = weights;
  static const federated::StrategyTable strategies;
  made.strategy = &strategies.get(XFFL_FEDAVG_HIERARCHICAL);
  TwoGroups groups(made);
  made.roles = made.strategy->roles(placement, groups);
  return made;
}

// What facility f's copy of shard element i holds before the average (two facilities).
inline float facility_value(int facility, size_t i) {
  return static_cast<float>(facility == 0 ? 1 + i % 97 : 5 + i % 97);
}

// Senders hold their facility's values; non-senders start from garbage, so a missing relay shows.
inline void fill(std::vector<float> &buf, const xffl::federated::Roles &roles) {
  for (size_t i = 0; i < buf.size(); ++i)
    buf[i] = roles.is_sender ? facility_value(roles.federated_rank, i) : -777.0f;
}

}  // namespace harness

#endif
