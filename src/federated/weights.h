// The FedAvg weights rule of the built-in strategies (xffl_set_federated_weights).
#ifndef XFFL_SRC_FEDERATED_WEIGHTS_H
#define XFFL_SRC_FEDERATED_WEIGHTS_H

#include "federated/strategy.h"

namespace xffl::federated {

// With weights w (one per federated group; the state checked them finite, non-negative, with a
// positive sum), this rank's copy is
// scaled by G * w_f / sum(w) before the cross-group AVG, so that the AVG yields the weighted mean
// sum(w_f x_f) / sum(w). Sets roles.weighted and roles.weight_factor; without weights, the plain
// mean (factor 1).
void apply_fedavg_weights(const Placement &placement, Roles &roles);

// Weighted averaging scales the data: floating-point dtypes only (XFFL_EINVAL naming the dtype).
void require_floating_when_weighted(const Roles &roles, xffl_dtype_t dtype);

}  // namespace xffl::federated

#endif
