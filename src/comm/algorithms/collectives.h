// The collectives of comm::Communicator on any PointToPoint: argument conventions of NCCL (in place
// when recv == send for allreduce, send == recv + index * count for allgather and
// recv == send + index * recv_count for reduce_scatter), the algorithm chosen by size, and the
// widening of f16/bf16 (and integer AVG) to their accumulation type. Every member must call with the
// same counts, dtype, op and root; a zero count returns at once without messages.
#ifndef XFFL_SRC_COMM_ALGORITHMS_COLLECTIVES_H
#define XFFL_SRC_COMM_ALGORITHMS_COLLECTIVES_H

#include <cstddef>
#include <functional>

#include "comm/algorithms/point_to_point.h"
#include "comm/algorithms/windows.h"
#include "xffl/types.h"

namespace xffl::comm::algorithms {

void allreduce(PointToPoint &p2p, const void *send, void *recv, size_t count, xffl_dtype_t dtype, xffl_redop_t op,
               const Tuning &tuning);

// The schedule allreduce takes for a call (schedules.h): by its bytes, recursive doubling up to
// tuning.small_allreduce_bytes, halving-doubling up to tuning.halving_allreduce_bytes, then the ring;
// recursive doubling too when there are fewer elements than members. The same answer on every member,
// from values every member knows.
enum class AllreduceSchedule { recursive_doubling, halving_doubling, ring };
AllreduceSchedule allreduce_schedule(size_t count, xffl_dtype_t dtype, int members, const Tuning &tuning);

// The ring path of allreduce, for any count of at least `members` elements. `delivered(first, count)`,
// when set, is called as each chunk of recv becomes final, in the order of the delivery_order of
// RingChunks::for_allreduce (chunks.h).
void ring_allreduce(PointToPoint &p2p, const void *send, void *recv, size_t count, xffl_dtype_t dtype,
                    xffl_redop_t op, const Tuning &tuning,
                    const std::function<void(size_t first, size_t count)> &delivered = {});

void broadcast(PointToPoint &p2p, void *buffer, size_t count, xffl_dtype_t dtype, int root, const Tuning &tuning);
// broadcast, whose root makes its buffer final through `producer` (windows.h) as the schedule
// sends it: chunk by chunk down the chain, or all of it first where the binomial tree is taken. Every
// member takes the same schedule as broadcast, so the other members may call either.
void produced_broadcast(PointToPoint &p2p, void *buffer, size_t count, xffl_dtype_t dtype, int root,
                        WindowProducer &producer, const Tuning &tuning);
void allgather(PointToPoint &p2p, const void *send, void *recv, size_t send_count, xffl_dtype_t dtype,
               const Tuning &tuning);
// allgather, in windows of `window` elements of each member's block (Communicator::allgather_streamed):
// produce(first, n) makes send's elements [first, first + n) final just before the schedule sends any
// of them, and consume(first, n) reads elements [first, first + n) of every block of recv once they are
// all final, windows in order, each exactly once (either may be empty). On the ring, the windows travel
// while the next ones are produced and the arrived ones consumed; one member produces, copies and
// consumes. The same messages as allgather: the members may call either.
void streamed_allgather(PointToPoint &p2p, const void *send, void *recv, size_t send_count, xffl_dtype_t dtype,
                        size_t window, const std::function<void(size_t first, size_t count)> &produce,
                        const std::function<void(size_t first, size_t count)> &consume, const Tuning &tuning);
void reduce_scatter(PointToPoint &p2p, const void *send, void *recv, size_t recv_count, xffl_dtype_t dtype,
                    xffl_redop_t op, const Tuning &tuning);
void barrier(PointToPoint &p2p);

}  // namespace xffl::comm::algorithms

#endif
