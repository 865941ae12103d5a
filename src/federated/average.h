// Federated averaging (DESIGN.md section 5) on top of the groups' communicators. Knows nothing of the
// state: the caller hands it the communicators and this rank's role.
#ifndef XFFL_SRC_FEDERATED_AVERAGE_H
#define XFFL_SRC_FEDERATED_AVERAGE_H

#include <cstddef>
#include <vector>

#include "comm/communicator.h"
#include "xffl/types.h"

namespace xffl::federated {

struct Roles {
  comm::Communicator *federated = nullptr;  // FEDERATED group (instance chosen by the caller)
  comm::Communicator *replica = nullptr;    // REPLICA group for HIERARCHICAL with HSDP, else null
  bool is_sender = true;
  int sender_index = 0;  // index of this rank's sender among the REPLICA members
  int federated_groups = 1;  // G: the size of every sender's FEDERATED group
  int federated_rank = 0;    // f: this rank's federated group, its sender's index in the FEDERATED group
  xffl_federated_strategy_t strategy = XFFL_FEDAVG_HIERARCHICAL;
  // Factor applied to this rank's copy before the cross-group AVG, so that the AVG yields the weighted
  // mean: G * w_f / sum(w). 1 for the plain mean.
  double weight_factor = 1.0;
  bool weighted = false;  // weights are set (the same on every rank, unlike weight_factor)
};

// In place: afterwards every copy of the shard holds the mean over federated groups.
// On failure the buffer's content is unspecified (as with any failed collective).
void average(const Roles &roles, void *buf, size_t count, xffl_dtype_t dtype, void *stream);

// Several buffers: those smaller than a bucket (16 MiB) are coalesced into buckets (copied in, averaged,
// copied back exactly), in the federated communicator's memory (host, or device memory with NCCL,
// copies ordered on the stream); larger ones are averaged in place.
void average_many(const Roles &roles, void *const *bufs, const size_t *counts, size_t n, xffl_dtype_t dtype,
                  void *stream);

}  // namespace xffl::federated

#endif
