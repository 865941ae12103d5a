#include "federated/weights.h"

#include "comm/dtype.h"
#include "common/error.h"

namespace xffl::federated {

void apply_fedavg_weights(const Placement &placement, Roles &roles) {
  if (placement.weights.empty()) return;
  roles.weighted = true;
  double sum = 0;
  for (double w : placement.weights) sum += w;
  roles.weight_factor = static_cast<double>(placement.weights.size()) *
                        placement.weights[static_cast<size_t>(placement.federated_rank)] / sum;
}

void require_floating_when_weighted(const Roles &roles, xffl_dtype_t dtype) {
  if (roles.weighted && !comm::is_floating(dtype))
    fail(XFFL_EINVAL, "weighted federated averaging needs a floating-point dtype, not ", comm::dtype_name(dtype),
         " (xffl_set_federated_weights(st, NULL, 0) returns to the plain mean for integer data)");
}

}  // namespace xffl::federated
