// Splitting buffers into segments (one per member) and segments into messages of bounded size.
#ifndef XFFL_SRC_COMM_ALGORITHMS_CHUNKS_H
#define XFFL_SRC_COMM_ALGORITHMS_CHUNKS_H

#include <cstddef>
#include <vector>

#include "comm/algorithms/point_to_point.h"

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

// Posts bytes as ceil(bytes / chunk_bytes) messages (one empty message when bytes is 0, so that a
// zero-byte exchange still synchronises). The receiving side must use the same chunk_bytes.
void send_chunked(PointToPoint &p2p, int peer, const void *data, size_t bytes, size_t chunk_bytes, Step step);
void recv_chunked(PointToPoint &p2p, int peer, void *data, size_t bytes, size_t chunk_bytes, Step step);

}  // namespace xffl::comm::algorithms

#endif
