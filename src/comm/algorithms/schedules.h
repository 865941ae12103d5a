// The collective schedules, each written once against PointToPoint. Buffers hold elements of the
// type they are reduced in (see comm/reduce.h); collectives.h picks a schedule and does the
// conversions. Every schedule needs at least two members and leaves every member bit-identical.
#ifndef XFFL_SRC_COMM_ALGORITHMS_SCHEDULES_H
#define XFFL_SRC_COMM_ALGORITHMS_SCHEDULES_H

#include <cstddef>
#include <functional>
#include <vector>

#include "comm/algorithms/chunks.h"
#include "comm/algorithms/point_to_point.h"
#include "comm/algorithms/windows.h"
#include "xffl/types.h"

namespace xffl::comm::algorithms {

// What a reducing schedule (the ring, halving-doubling) reads, where it builds the partial results and
// where the final values go.
struct ReduceJob {
  const void *input = nullptr;  // my contribution (reduce type), the whole extent
  void *partial = nullptr;      // where partial results are built (reduce type, same extent; may be input)
  xffl_dtype_t type = XFFL_F32;
  xffl_redop_t op = XFFL_SUM;
  // Called for the elements [first, first + count) this member reduced, once they are fully reduced
  // and before they are gathered: writes their final values (AVG division, narrowing) into `output`.
  std::function<void(size_t first, size_t count)> finish;
  void *output = nullptr;  // gather target, same element positions (may be partial); the ring: nullptr
                           // for a reduce-scatter alone
  size_t output_element_size = 0;
};

// Ring reduce-scatter, optionally followed by the ring all-gather, pipelined chunk by chunk: a chunk
// is forwarded as soon as it is reduced, receives are posted `window` chunks ahead into staging.
// The segments and chunks are those of `chunks` (chunks.h): member i ends the reduce-scatter owning
// segment i, finished chunk by chunk. 2(n-1) steps with the all-gather, n-1 without.
struct RingReduce : ReduceJob {
  // Optional, with the all-gather: called once per chunk as soon as `output` holds its final values,
  // in the order of RingChunks::delivery_order (a relay forwards chunks from here while the ring goes on).
  std::function<void(size_t first, size_t count)> delivered;
};
// chunks.per_chunk() elements of the wider of job.type and the output fit one message.
void ring_reduce(PointToPoint &p2p, const RingChunks &chunks, const RingReduce &job, const Tuning &tuning);

// Recursive doubling over the largest power of two p <= n, with the other n - p members folded into
// their neighbours first and sent the result last. Operands are always combined lower half on the
// left, so every member computes the same tree of operations. log2(p) (+2 when folding) steps.
void recursive_doubling_allreduce(PointToPoint &p2p, void *buffer, size_t count, xffl_dtype_t type,
                                  xffl_redop_t op, const Tuning &tuning);

// Rabenseifner's allreduce: a reduce-scatter by recursive halving (the data halves while the
// partner's distance doubles: the nearest partner first, with the most data), then an all-gather by
// recursive doubling (the reverse), over the largest power of two p <= n; the other n - p members are
// folded into their neighbours first and sent the result last, as in recursive doubling. 2 log2(p)
// steps (+2 when folding), each member sending (p - 1) / p of the buffer in each half as the ring
// does: for the sizes between recursive doubling's and the ring's (algorithm_choice.h). One member
// reduces each element at each step and the others copy its bits. job.finish is called once, with the
// block this member reduced.
void halving_doubling_allreduce(PointToPoint &p2p, size_t count, const ReduceJob &job, const Tuning &tuning);

// Binomial tree from root: ceil(log2 n) steps; for small messages.
void binomial_broadcast(PointToPoint &p2p, void *buffer, size_t bytes, int root, const Tuning &tuning);

// Pipelined chain root -> root+1 -> ...: each chunk is forwarded as soon as it arrives; for large ones.
// With `producer` (the root's, windows.h), the root makes each chunk final just before sending it.
void chain_broadcast(PointToPoint &p2p, void *buffer, size_t bytes, int root, const Tuning &tuning,
                     WindowProducer *producer = nullptr);

// Ring all-gather of n blocks of block_bytes; my block must already be in place, or be made final by
// `producer` (windows.h) chunk by chunk as it leaves. `consumer` (windows.h), when
// given, reads each window of every block as soon as it is final. n-1 steps; n >= 2.
void ring_allgather(PointToPoint &p2p, void *buffer, size_t block_bytes, const Tuning &tuning,
                    WindowProducer *producer = nullptr, WindowConsumer *consumer = nullptr);

// Dissemination barrier: in step k everyone signals index + 2^k and hears from index - 2^k.
void dissemination_barrier(PointToPoint &p2p);

}  // namespace xffl::comm::algorithms

#endif
