#include "federated/average.h"

namespace xffl::federated {

void average(const Roles &roles, void *buf, size_t count, xffl_dtype_t dtype, void *stream) {
  if (roles.strategy == XFFL_FEDAVG_FLAT || !roles.replica) {
    // Every rank averages over its FEDERATED group. Correct whenever every rank's FEDERATED group spans
    // all federated groups (symmetric layouts); the caller refuses FLAT otherwise.
    roles.federated->allreduce(buf, buf, count, dtype, XFFL_AVG, stream);
    return;
  }
  // HIERARCHICAL: senders average across groups, then each replica group takes its sender's result,
  // so non-sender replicas never drift (xFFL's asymmetric path skips this broadcast).
  if (roles.is_sender) roles.federated->allreduce(buf, buf, count, dtype, XFFL_AVG, stream);
  roles.replica->broadcast(buf, count, dtype, roles.sender_index, stream);
}

}  // namespace xffl::federated
