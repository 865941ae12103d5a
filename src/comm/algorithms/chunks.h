// Splitting buffers into segments (one per member) and segments into messages of bounded size, and
// the ring's plan of them (RingChunks).
#ifndef XFFL_SRC_COMM_ALGORITHMS_CHUNKS_H
#define XFFL_SRC_COMM_ALGORITHMS_CHUNKS_H

#include <cstddef>
#include <vector>

#include "comm/algorithms/point_to_point.h"
#include "xffl/types.h"

namespace xffl::comm::algorithms {

// count elements split into `parts` contiguous segments whose sizes differ by at most one (larger
// ones first). Returns parts + 1 element offsets.
std::vector<size_t> balanced_bounds(size_t count, int parts);

// `parts` segments of exactly `block` elements each.
std::vector<size_t> block_bounds(size_t block, int parts);

// Number of messages of at most max_elements each that carry `elements` (0 for 0).
inline size_t chunk_count(size_t elements, size_t max_elements) {
  return (elements + max_elements - 1) / max_elements;
}

// Elements per message for a chunk budget in bytes (at least one).
inline size_t chunk_elements(size_t chunk_bytes, size_t element_size) {
  const size_t elements = chunk_bytes / element_size;
  return elements ? elements : 1;
}

// A chunk of a buffer, in elements.
struct Span {
  size_t first = 0;
  size_t count = 0;
};

// How the pipelined ring (ring_reduce, schedules.h) cuts a buffer: member i of n owns segment i,
// [bounds[i], bounds[i + 1]), and every segment travels in messages of at most per_chunk elements. It
// also says in which order each member receives the chunks and learns their final values. The ring
// runs from it, and so does the relay of federated averaging (relay.h), whose receivers follow the
// sender's ring from outside: one plan, so that the two cannot disagree.
class RingChunks {
 public:
  // bounds: members + 1 element offsets (balanced_bounds, block_bounds); per_chunk at least 1. The
  // ring needs at least two members; with one, the orders below are empty.
  RingChunks(std::vector<size_t> bounds, size_t per_chunk);
  // The all-reduce of count elements over `members` (at least 1): balanced segments, messages of
  // tuning.chunk_bytes in the wider of dtype and its accumulation type for op (what the ring carries).
  static RingChunks for_allreduce(size_t count, xffl_dtype_t dtype, xffl_redop_t op, int members,
                                  const Tuning &tuning);

  int members() const { return static_cast<int>(bounds_.size()) - 1; }
  const std::vector<size_t> &bounds() const { return bounds_; }
  size_t per_chunk() const { return per_chunk_; }

  // The messages of `segment`, in buffer order.
  std::vector<Span> segment_chunks(int segment) const;

  // One chunk that member `me` receives from its left neighbour, in the order it receives them.
  struct Arrival {
    int step;  // reduce-scatter steps 0 .. n-2, then all-gather steps n-1 .. 2n-3
    Span span;
  };
  // Every chunk member `me` receives in the first `steps` steps: n - 1 for the reduce-scatter alone,
  // 2(n - 1) with the all-gather.
  std::vector<Arrival> arrivals(int me, int steps) const;
  // The chunks whose final values member `me` learns with the all-gather, in the order it learns them:
  // its own segment as the last reduce-scatter step reduces it, then each gathered chunk as it lands.
  std::vector<Span> delivery_order(int me) const;

 private:
  std::vector<size_t> bounds_;
  size_t per_chunk_;
};

// Posts bytes as ceil(bytes / chunk_bytes) messages (one empty message when bytes is 0, so that a
// zero-byte exchange still synchronises). The receiving side must use the same chunk_bytes.
void send_chunked(PointToPoint &p2p, int peer, const void *data, size_t bytes, size_t chunk_bytes, Step step);
void recv_chunked(PointToPoint &p2p, int peer, void *data, size_t bytes, size_t chunk_bytes, Step step);

}  // namespace xffl::comm::algorithms

#endif
