#include "comm/algorithms/chunks.h"

#include <algorithm>
#include <utility>

#include "comm/dtype.h"
#include "comm/reduce.h"

namespace xffl::comm::algorithms {

namespace {
int wrap(int value, int n) { return ((value % n) + n) % n; }
}  // namespace

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

RingChunks::RingChunks(std::vector<size_t> bounds, size_t per_chunk)
    : bounds_(std::move(bounds)), per_chunk_(per_chunk) {}

RingChunks RingChunks::for_allreduce(size_t count, xffl_dtype_t dtype, xffl_redop_t op, int members,
                                     const Tuning &tuning) {
  const size_t reduce_element = dtype_size(accumulation_dtype(dtype, op));
  return RingChunks(balanced_bounds(count, members),
                    chunk_elements(tuning.chunk_bytes, std::max(reduce_element, dtype_size(dtype))));
}

std::vector<Span> RingChunks::segment_chunks(int segment) const {
  std::vector<Span> chunks;
  const size_t end = bounds_[static_cast<size_t>(segment) + 1];
  for (size_t first = bounds_[static_cast<size_t>(segment)]; first < end; first += per_chunk_)
    chunks.push_back({first, std::min(per_chunk_, end - first)});
  return chunks;
}

// Reduce-scatter step s receives segment (me - s - 2); all-gather step s receives (me - (s - (n-1)) - 1).
std::vector<RingChunks::Arrival> RingChunks::arrivals(int me, int steps) const {
  const int n = members();
  std::vector<Arrival> arrivals;
  for (int s = 0; s < steps; ++s) {
    const int segment = s < n - 1 ? wrap(me - s - 2, n) : wrap(me - (s - (n - 1)) - 1, n);
    for (const Span &chunk : segment_chunks(segment)) arrivals.push_back({s, chunk});
  }
  return arrivals;
}

// Reduced in the last reduce-scatter step (n - 2): my own segment, final once finished; then every
// all-gather arrival is final as it lands.
std::vector<Span> RingChunks::delivery_order(int me) const {
  const int n = members();
  std::vector<Span> order;
  for (const Arrival &a : arrivals(me, 2 * (n - 1)))
    if (a.step >= n - 2) order.push_back(a.span);
  return order;
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
