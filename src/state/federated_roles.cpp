// DistributedState::federated_averaging: the strategy picked by XFFL_OPT_FEDERATED_STRATEGY, handed this
// rank's numbers from its plan and its groups' communicators (federated/strategy.h).
#include "common/error.h"
#include "state/distributed_state.h"

namespace xffl {

namespace {

// The layout's FEDERATED and REPLICA groups (instance 0), their communicators made when a strategy
// first asks for them.
class LayoutGroups final : public federated::Groups {
 public:
  LayoutGroups(const DistributedState &state, bool hsdp, void *stream) : state_(state), hsdp_(hsdp), stream_(stream) {}

  comm::Communicator &federated() override {
    xffl_group *group = state_.group(XFFL_GROUP_FEDERATED, 0);
    group->check_stream(stream_);
    return group->communicator();
  }
  comm::Communicator &replica() override {
    if (!hsdp_) fail(XFFL_EINTERNAL, "a federated strategy asked for the REPLICA group of a layout without HSDP");
    return state_.group(XFFL_GROUP_REPLICA, 0)->communicator();
  }

 private:
  const DistributedState &state_;
  bool hsdp_;
  void *stream_;
};

}  // namespace

federated::Averaging DistributedState::federated_averaging(void *stream) const {
  if (!is_federated_scaling_setup())
    fail(XFFL_ESTATE, "federated averaging needs xffl_federated_scaling first");
  const topology::RankPlan &p = *plan_;
  federated::Placement placement;
  placement.federated_groups = *p.federated_world_size;
  placement.federated_rank = *p.federated_rank;
  placement.is_sender = p.is_sender.value_or(true);
  placement.hsdp = p.replica_group.has_value();
  if (placement.hsdp)
    placement.sender_index = group(XFFL_GROUP_REPLICA, 0)->members().index_of(p.receive_from.value_or(p.rank));
  placement.federated_sizes = *p.federated_local_size;
  placement.weights = federated_weights_;
  LayoutGroups groups(*this, placement.hsdp, stream);
  federated::Averaging averaging;
  averaging.strategy = &federated_strategies_.get(options_.strategy);
  averaging.roles = averaging.strategy->roles(placement, groups);
  averaging.roles.wire_format = options_.wire_format;
  averaging.roles.error_feedback = options_.error_feedback ? error_feedback_.get() : nullptr;
  averaging.roles.hop_scratch = hop_scratch_.get();
  averaging.roles.device_memory = backend_->memory_kind() == comm::MemoryKind::kDevice;
  averaging.roles.host_crossing = backend_->crossing_on_host();
  return averaging;
}

}  // namespace xffl
