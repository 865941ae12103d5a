// DistributedState::federated_averaging: the strategy picked by XFFL_OPT_FEDERATED_STRATEGY, handed this
// rank's numbers from its plan and its groups' communicators (federated/strategy.h); and
// DistributedState::continuing_average: this rank's place (and the WAN hop's format, residuals and
// scratch) handed to the round protocol of facility mode with XFFL_FACILITY_FAULTS_CONTINUE
// (state/facility_rounds.h), checked on the calling thread and run there or on a request's.
#include "comm/dtype.h"
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

namespace xffl {

ContinuingAverage DistributedState::continuing_average(xffl_dtype_t dtype, void *stream) const {
  if (!is_federated_scaling_setup())
    fail(XFFL_ESTATE, "federated averaging needs xffl_federated_scaling first");
  group(XFFL_GROUP_FEDERATED, 0)->check_stream(stream);
  const char *mode = "XFFL_FACILITY_FAULTS_CONTINUE in facility mode";
  // Device memory (nccl): the round runs on a host copy of the shard, staged through the crossing
  // groups' host backend (wan, always in facility mode); without one it cannot run.
  const bool device_memory = backend_->memory_kind() == comm::MemoryKind::kDevice;
  if (device_memory && !backend_->crossing_on_host())
    fail(XFFL_EUNSUPPORTED, mode, " averages device memory (backend nccl) only with its crossing groups on a host ",
         "backend (XFFL_CROSS_FACILITY_BACKEND=wan, the default in facility mode); use it, or ",
         "XFFL_FACILITY_FAULTS_FAIL");
  const topology::RankPlan &p = *plan_;
  const bool hsdp = p.replica_group.has_value();
  if (options_.strategy != XFFL_FEDAVG_HIERARCHICAL && !(options_.strategy == XFFL_FEDAVG_FLAT && !hsdp))
    fail(XFFL_EUNSUPPORTED, mode, " averages with XFFL_FEDAVG_HIERARCHICAL (or FLAT without HSDP, the same "
         "groups) only; strategy ", static_cast<int>(options_.strategy));
  if (!federated_weights_.empty() && !comm::is_floating(dtype))
    fail(XFFL_EINVAL, "weighted federated averaging needs a floating-point dtype, not ", comm::dtype_name(dtype),
         " (xffl_set_federated_weights(st, NULL, 0) returns to the plain mean for integer data)");
  ContinuingAverage average;
  average.rounds = facility_rounds_.get();
  FacilityRounds::Placement &placement = average.placement;
  placement.backend = backend_;
  const int facilities = *p.federated_world_size;
  placement.crossing = p.is_sender.value_or(true) && p.federated_group && p.federated_group->size() == facilities;
  placement.shard = hsdp ? *p.replica_local_rank : *p.federated_local_rank;
  placement.shards = hsdp ? p.hsdp : (*p.federated_local_size)[0];
  if (placement.crossing)
    for (int f = 0; f < facilities; ++f) placement.crossing_ranks.push_back(p.federated_group->at(f));
  if (hsdp) {
    xffl_group *replica = group(XFFL_GROUP_REPLICA, 0);
    placement.relay = &replica->communicator();
    placement.relay_root = replica->members().index_of(p.receive_from.value_or(p.rank));
  }
  placement.weights = federated_weights_;
  placement.wire_format = options_.wire_format;
  placement.error_feedback = options_.error_feedback ? error_feedback_.get() : nullptr;
  placement.hop_scratch = hop_scratch_.get();
  placement.device_memory = device_memory;
  placement.stream = stream;
  return average;
}

void DistributedState::federated_average_continuing(void *const *bufs, const size_t *counts, size_t n,
                                                    xffl_dtype_t dtype, void *stream) {
  continuing_average(dtype, stream).run(bufs, counts, n, dtype);
}

}  // namespace xffl
