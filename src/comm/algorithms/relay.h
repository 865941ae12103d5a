// HIERARCHICAL federated averaging as one schedule, so that the cross-facility all-reduce and the
// broadcast inside each facility overlap chunk by chunk (DESIGN.md section 5).
//
// The sender of a replica group all-reduces over its federated group with the pipelined ring; each chunk
// is forwarded down a chain through its replica group (sender, sender + 1, ...) the moment the ring makes
// it final, in the ring's own delivery order. Non-senders compute that order from what every member
// knows (count, dtype, op, the federated group's size and the sender's index in it), receive the chunks
// in it and forward each at once. Sizes where the all-reduce would not take the ring fall back, on both
// sides alike, to the all-reduce followed by an ordinary broadcast.
#ifndef XFFL_SRC_COMM_ALGORITHMS_RELAY_H
#define XFFL_SRC_COMM_ALGORITHMS_RELAY_H

#include <cstddef>

#include "comm/algorithms/point_to_point.h"
#include "xffl/types.h"

namespace xffl::comm::algorithms {

// Sender: in place on buffer. `federated` is the sender's federated group, `relay` its replica group
// with the sender at index relay.index().
void allreduce_and_relay(PointToPoint &federated, PointToPoint &relay, void *buffer, size_t count, xffl_dtype_t dtype,
                         xffl_redop_t op, const Tuning &tuning);

// Non-sender: receives the relay from `root` (the sender's index in the replica group) into buffer.
// federated_size and sender_index (its index in its federated group) give the delivery order.
void relay_receive(PointToPoint &relay, int root, void *buffer, size_t count, xffl_dtype_t dtype, xffl_redop_t op,
                   int federated_size, int sender_index, const Tuning &tuning);

}  // namespace xffl::comm::algorithms

#endif
