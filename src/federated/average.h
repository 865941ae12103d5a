// Federated averaging (DESIGN.md section 5) on top of the groups' communicators. Knows nothing of the
// state: the caller hands it the communicators and this rank's role.
#ifndef XFFL_SRC_FEDERATED_AVERAGE_H
#define XFFL_SRC_FEDERATED_AVERAGE_H

#include <cstddef>

#include "comm/communicator.h"
#include "xffl/types.h"

namespace xffl::federated {

struct Roles {
  comm::Communicator *federated = nullptr;  // FEDERATED group (instance chosen by the caller)
  comm::Communicator *replica = nullptr;    // REPLICA group, or null without HSDP
  bool is_sender = true;
  int sender_index = 0;                     // index of this rank's sender among the REPLICA members
  xffl_federated_strategy_t strategy = XFFL_FEDAVG_HIERARCHICAL;
};

// In place: afterwards every copy of the shard holds the mean over federated groups.
void average(const Roles &roles, void *buf, size_t count, xffl_dtype_t dtype, void *stream);

}  // namespace xffl::federated

#endif
