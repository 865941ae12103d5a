// One thread-rank's part in federated averaging on the NCCL backend, made as the state makes it: the
// FEDERATED and REPLICA families prepared (collective: every rank, same order), their communicators,
// and the roles. Shared by the weighted/bucketed tests and the crossing (UCX-staged) tests.
#ifndef XFFL_TESTS_UNIT_NCCL_FEDERATED_RANK_H
#define XFFL_TESTS_UNIT_NCCL_FEDERATED_RANK_H

#include <memory>
#include <vector>

#include "federated/average.h"
#include "nccl_harness.h"
#include "topology/plan.h"

namespace harness {

struct FederatedRank {
  std::unique_ptr<xffl::comm::Communicator> federated, replica;
  xffl::federated::Roles roles;
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
  federated::Roles &roles = made.roles;
  roles.federated = made.federated.get();
  roles.replica = made.replica.get();
  roles.is_sender = *plan.is_sender;
  roles.sender_index = plan.replica_group->index_of(plan.receive_from.value_or(rank));
  roles.federated_groups = static_cast<int>(sizes.size());
  roles.federated_rank = *plan.federated_rank;
  if (!weights.empty()) {
    roles.weighted = true;
    double sum = 0;
    for (double w : weights) sum += w;
    roles.weight_factor = static_cast<double>(weights.size()) * weights[static_cast<size_t>(roles.federated_rank)] / sum;
  }
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
