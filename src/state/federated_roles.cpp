// DistributedState::federated_roles: this rank's part in federated averaging, from its plan.
#include "common/error.h"
#include "state/distributed_state.h"

namespace xffl {

federated::Roles DistributedState::federated_roles(void *stream) const {
  if (!is_federated_scaling_setup())
    fail(XFFL_ESTATE, "federated averaging needs xffl_federated_scaling first");
  const topology::RankPlan &p = *plan_;
  federated::Roles roles;
  roles.strategy = options_.strategy;
  xffl_group *federated_group = group(XFFL_GROUP_FEDERATED, 0);
  federated_group->check_stream(stream);
  roles.federated = &federated_group->communicator();
  roles.is_sender = p.is_sender.value_or(true);
  roles.federated_groups = *p.federated_world_size;
  roles.federated_rank = *p.federated_rank;
  if (!federated_weights_.empty()) {
    roles.weighted = true;
    double sum = 0;
    for (double w : federated_weights_) sum += w;  // validated positive in set_federated_weights
    roles.weight_factor =
        static_cast<double>(federated_weights_.size()) * federated_weights_[static_cast<size_t>(roles.federated_rank)] / sum;
  }
  if (!p.replica_group) return roles;  // no HSDP: every rank crosses

  xffl_group *replica = group(XFFL_GROUP_REPLICA, 0);
  roles.sender_index = replica->members().index_of(p.receive_from.value_or(p.rank));
  if (roles.strategy == XFFL_FEDAVG_HIERARCHICAL) {
    roles.replica = &replica->communicator();
    return roles;
  }
  for (int size : *p.federated_local_size)
    if (size != (*p.federated_local_size)[0])
      fail(XFFL_EINVAL, "strategy FLAT needs equal federated sizes (non-senders of unequal groups have no partner "
                        "across groups); use XFFL_FEDAVG_HIERARCHICAL");
  return roles;
}

}  // namespace xffl
