// The little a collective algorithm needs from a transport: post sends and receives to peers (by
// index in the group) and wait for them. UcxTransport implements it over UCX tags; the unit tests
// implement it with in-process mailboxes, so every schedule is tested without a network.
//
// Contract of an implementation:
// - Messages from one sender to one receiver within one collective are matched in the order they
//   were posted on both sides (UCX tag matching keeps MPI's non-overtaking order).
// - A posted buffer stays untouched by the algorithm until its request has been waited for.
// - wait()/wait_all() throw xffl::Error (XFFL_ETIMEOUT, XFFL_EPEER, ...) naming the peer and the step.
#ifndef XFFL_SRC_COMM_ALGORITHMS_POINT_TO_POINT_H
#define XFFL_SRC_COMM_ALGORITHMS_POINT_TO_POINT_H

#include <cstddef>

namespace xffl::comm::algorithms {

// Where a message sits in its collective: error messages say "(step 2 of 7)", 1-based.
struct Step {
  int index = 0;  // 0-based
  int total = 1;
};

using RequestId = size_t;
class ScratchStack;  // scratch.h

class PointToPoint {
 public:
  virtual ~PointToPoint() = default;
  virtual int size() const = 0;
  virtual int index() const = 0;
  virtual RequestId send(int peer, const void *data, size_t bytes, Step step) = 0;
  virtual RequestId recv(int peer, void *data, size_t bytes, Step step) = 0;
  virtual void wait(RequestId request) = 0;
  // Waits for every request posted so far.
  virtual void wait_all() = 0;
  // Memory for the collective's Scratch kept between calls, or nullptr (Scratch then uses the heap).
  virtual ScratchStack *scratch_stack() { return nullptr; }
};

// Knobs of the algorithm choice; the defaults suit host memory over shared memory or TCP.
struct Tuning {
  size_t chunk_bytes = size_t{1} << 20;          // largest single message; pipelining unit
  int window = 8;                                 // receives posted ahead in the ring
  size_t small_allreduce_bytes = size_t{64} << 10;  // at most this: recursive doubling, else ring
  size_t small_broadcast_bytes = size_t{256} << 10; // at most this: binomial tree, else chain
};

}  // namespace xffl::comm::algorithms

#endif
