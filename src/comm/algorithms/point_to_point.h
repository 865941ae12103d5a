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
#include <optional>

#include "comm/algorithm_choice.h"

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

// When members on one host read each other's buffers directly (algorithms/single_copy.h).
enum class SingleCopy {
  by_size,  // from the sizes of algorithm_choice.h
  always,   // at every size (tests drive the schedules with small buffers)
  never,    // UCX messages only
};

// Knobs of the algorithm choice; the defaults (comm/algorithm_choice.h, the one table of crossovers)
// suit host memory over shared memory or TCP.
struct Tuning {
  size_t chunk_bytes = algorithm_choice::ring_chunk_bytes;              // largest single message; pipelining unit
  int window = algorithm_choice::ring_window;                           // receives posted ahead in the ring
  // The window of a group that crosses facilities (GroupSpec::crosses_facilities), whose round trips
  // are a WAN's: on UCX, and on the wan backend (comm/wan, at least this; more for a large XFFL_WAN_BDP).
  int crossing_window = algorithm_choice::wan_ring_window;
  size_t small_allreduce_bytes = algorithm_choice::small_allreduce_bytes;  // at most this: recursive doubling, else ring
  // Above small_allreduce_bytes and at most this: halving-doubling (Rabenseifner), else the ring;
  // algorithm_choice::halving_allreduce_bytes(members) when not set, 0 for none. Groups that cross
  // facilities and the wan backend set 0: their crossover was not measured over a WAN.
  std::optional<size_t> halving_allreduce_bytes;
  size_t small_broadcast_bytes = algorithm_choice::small_broadcast_bytes;  // at most this: binomial tree, else chain
  SingleCopy single_copy_on_host = SingleCopy::by_size;
  // The most a member's part of one round of the pipelined allreduce on one host holds
  // (ucx/host_collectives.h); tests make it small to run many rounds on small buffers.
  size_t host_pipeline_chunk_bytes = algorithm_choice::host_pipeline_chunk_bytes;
  // From this size of its output a pipelined call on one host writes the output with streaming stores
  // (comm/streaming_copy.h): algorithm_choice::host_stream_output_from(members) when not set; tests set
  // it to run them on small buffers.
  std::optional<size_t> host_stream_output_from;
};

}  // namespace xffl::comm::algorithms

#endif
