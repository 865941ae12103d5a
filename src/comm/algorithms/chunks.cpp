#include "comm/algorithms/chunks.h"

#include <algorithm>

namespace xffl::comm::algorithms {

std::vector<size_t> balanced_bounds(size_t count, int parts) {
  const size_t n = static_cast<size_t>(parts);
  const size_t base = count / n;
  const size_t larger = count % n;
  std::vector<size_t> bounds(n + 1);
  for (size_t i = 0; i <= n; ++i) bounds[i] = i * base + std::min(i, larger);
  return bounds;
}

std::vector<size_t> block_bounds(size_t block, int parts) {
  std::vector<size_t> bounds(static_cast<size_t>(parts) + 1);
  for (size_t i = 0; i < bounds.size(); ++i) bounds[i] = i * block;
  return bounds;
}

void send_chunked(PointToPoint &p2p, int peer, const void *data, size_t bytes, size_t chunk_bytes, Step step) {
  const auto *bytes_in = static_cast<const unsigned char *>(data);
  size_t offset = 0;
  do {
    const size_t length = std::min(chunk_bytes, bytes - offset);
    p2p.send(peer, bytes_in + offset, length, step);
    offset += length;
  } while (offset < bytes);
}

void recv_chunked(PointToPoint &p2p, int peer, void *data, size_t bytes, size_t chunk_bytes, Step step) {
  auto *bytes_out = static_cast<unsigned char *>(data);
  size_t offset = 0;
  do {
    const size_t length = std::min(chunk_bytes, bytes - offset);
    p2p.recv(peer, bytes_out + offset, length, step);
    offset += length;
  } while (offset < bytes);
}

}  // namespace xffl::comm::algorithms
