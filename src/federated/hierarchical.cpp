// XFFL_FEDAVG_HIERARCHICAL: only the senders cross facilities. Each sender averages over its FEDERATED
// group (one sender per federated group) and relays the result through its REPLICA group as the ring
// makes it final (comm::Communicator::allreduce_and_relay), so non-sender replicas never drift: xFFL's
// asymmetric path never broadcasts. Without HSDP every rank is a sender and the relay is empty.
#include "federated/strategy.h"
#include "federated/weights.h"
#include "federated/wire/wan_hop.h"

namespace xffl::federated {

namespace {

class Hierarchical final : public Strategy {
 public:
  Roles roles(const Placement &placement, Groups &groups) const override {
    Roles roles;
    roles.federated = &groups.federated();
    roles.is_sender = placement.is_sender;
    roles.federated_groups = placement.federated_groups;
    roles.federated_rank = placement.federated_rank;
    apply_fedavg_weights(placement, roles);
    if (placement.hsdp) {
      roles.sender_index = placement.sender_index;
      roles.replica = &groups.replica();
    }
    return roles;
  }

 protected:
  void schedule(const Roles &roles, void *buf, size_t count, xffl_dtype_t dtype, void *stream) const override {
    if (!roles.replica) {  // no HSDP: every rank crosses
      wire::cross_facilities(roles, buf, count, dtype, stream);
      return;
    }
    if (wire::compresses(roles, count, dtype)) {  // the compressed WAN hop, relayed as it is decoded
      wire::cross_and_relay(roles, buf, count, dtype, stream);
      return;
    }
    if (roles.is_sender) {
      roles.federated->allreduce_and_relay(buf, count, dtype, XFFL_AVG, roles.weight_factor, *roles.replica,
                                           roles.sender_index, stream);
    } else {
      roles.replica->relay_receive(buf, count, dtype, XFFL_AVG, roles.sender_index, roles.federated_groups,
                                   roles.federated_rank, stream);
    }
  }
};

}  // namespace

const Strategy &hierarchical_strategy() {
  static const Hierarchical strategy;
  return strategy;
}

}  // namespace xffl::federated
