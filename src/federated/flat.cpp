// XFFL_FEDAVG_FLAT, xFFL's symmetric way: every rank all-reduces over its FEDERATED group, so with HSDP
// every replica crosses facilities (DESIGN.md 3.2). That needs a partner for every replica in every
// other federated group: with HSDP, unequal federated sizes are refused.
#include "common/error.h"
#include "federated/strategy.h"
#include "federated/weights.h"
#include "federated/wire/wan_hop.h"

namespace xffl::federated {

namespace {

class Flat final : public Strategy {
 public:
  Roles roles(const Placement &placement, Groups &groups) const override {
    Roles roles;
    roles.federated = &groups.federated();
    roles.is_sender = placement.is_sender;
    roles.federated_groups = placement.federated_groups;
    roles.federated_rank = placement.federated_rank;
    apply_fedavg_weights(placement, roles);
    if (!placement.hsdp) return roles;  // no HSDP: the same groups as HIERARCHICAL
    for (int size : placement.federated_sizes)
      if (size != placement.federated_sizes[0])
        fail(XFFL_EINVAL, "strategy FLAT needs equal federated sizes (non-senders of unequal groups have no partner "
                          "across groups); use XFFL_FEDAVG_HIERARCHICAL");
    return roles;
  }

 protected:
  void schedule(const Roles &roles, void *buf, size_t count, xffl_dtype_t dtype, void *stream) const override {
    wire::cross_facilities(roles, buf, count, dtype, stream);
  }
};

}  // namespace

const Strategy &flat_strategy() {
  static const Flat strategy;
  return strategy;
}

}  // namespace xffl::federated
