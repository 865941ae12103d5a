// The collectives of members on one host, reading each other's buffers directly (PeerMemory): every
// byte crosses between processes once, copied by the reader, as Open MPI's coll/sm with CMA and
// NCCL's intra-node rings do. The messages over PointToPoint only carry what synchronises: each
// member's buffer addresses, "my segment is final", and "I am done reading yours". So every wait is
// a PointToPoint wait, with its timeout, its peer-failure detection and its messages.
//
// Reduce-scatter: member i reduces segment i (balanced_bounds for allreduce, blocks of recv_count for
// reduce_scatter) chunk by chunk, reading each member's contribution in member order 0, 1, ..., n-1
// and combining lower members on the left (comm/reduce.h), so each element is reduced once, in one
// order, and every member copies the same bits. All-gather: member i reads segment j from member j's
// output once j says it is final.
//
// Why it is safe: a member returns only after every other member said it is done reading its
// buffers. In place, member j overwrites its segment i (all-gather) only after member i said segment
// i is final, which i says after its last read of anyone's input; nobody else reads segment i of j.
// Every schedule needs at least two members and a non-zero count (collectives.h handles the rest).
#ifndef XFFL_SRC_COMM_ALGORITHMS_SINGLE_COPY_H
#define XFFL_SRC_COMM_ALGORITHMS_SINGLE_COPY_H

#include <cstddef>

#include "comm/algorithms/peer_memory.h"
#include "comm/algorithms/point_to_point.h"
#include "comm/algorithms/windows.h"
#include "xffl/types.h"

namespace xffl::comm::algorithms {

// Three rounds of n - 1 small messages each way.
void single_copy_allreduce(PointToPoint &p2p, PeerMemory &memory, const void *send, void *recv, size_t count,
                           xffl_dtype_t dtype, xffl_redop_t op);
// Two rounds.
void single_copy_reduce_scatter(PointToPoint &p2p, PeerMemory &memory, const void *send, void *recv,
                                size_t recv_count, xffl_dtype_t dtype, xffl_redop_t op);
void single_copy_allgather(PointToPoint &p2p, PeerMemory &memory, const void *send, void *recv, size_t send_count,
                           xffl_dtype_t dtype);
// The root sends its address to every member, each reads the buffer and tells the root it is done.
void single_copy_broadcast(PointToPoint &p2p, PeerMemory &memory, void *buffer, size_t bytes, int root);
// single_copy_broadcast whose root makes its buffer final through `producer` (windows.h): the
// root sends its address once per window, after producing it, and each member reads that window as its
// notice comes, while the root produces the next. Every member passes a producer of the same windows.
void single_copy_produced_broadcast(PointToPoint &p2p, PeerMemory &memory, void *buffer, size_t bytes, int root,
                                    WindowProducer &producer);

}  // namespace xffl::comm::algorithms

#endif
