#include <algorithm>
#include <vector>

#include "comm/algorithms/chunks.h"
#include "comm/algorithms/schedules.h"

namespace xffl::comm::algorithms {

namespace {

int relative(int index, int root, int n) { return (index - root + n) % n; }
int absolute(int relative_index, int root, int n) { return (relative_index + root) % n; }

}  // namespace

void binomial_broadcast(PointToPoint &p2p, void *buffer, size_t bytes, int root, const Tuning &tuning) {
  const int n = p2p.size();
  const int me = relative(p2p.index(), root, n);
  int total_steps = 0;
  while ((1 << total_steps) < n) ++total_steps;

  // The root sends the largest distance first. I receive across the distance of my lowest set bit
  // 2^k (in step total - 1 - k), then send to me + 2^j for every j < k, largest first.
  int mask = 1;
  int step = 0;
  while (mask < n) {
    if (me & mask) {
      recv_chunked(p2p, absolute(me - mask, root, n), buffer, bytes, tuning.chunk_bytes,
                   Step{total_steps - 1 - step, total_steps});
      p2p.wait_all();
      break;
    }
    mask <<= 1;
    ++step;
  }
  for (mask >>= 1, --step; mask > 0; mask >>= 1, --step) {
    if (me + mask < n)
      send_chunked(p2p, absolute(me + mask, root, n), buffer, bytes, tuning.chunk_bytes,
                   Step{total_steps - 1 - step, total_steps});
  }
  p2p.wait_all();
}

void chain_broadcast(PointToPoint &p2p, void *buffer, size_t bytes, int root, const Tuning &tuning,
                     WindowProducer *producer) {
  const int n = p2p.size();
  const int me = relative(p2p.index(), root, n);
  const bool has_next = me + 1 < n;
  const int next = absolute(me + 1, root, n);
  const int previous = absolute(me - 1 + n, root, n);
  auto *data = static_cast<unsigned char *>(buffer);
  const size_t chunk = tuning.chunk_bytes;
  const size_t chunks = std::max<size_t>(1, chunk_count(bytes, chunk));
  // Steps count hops down the chain: "step 3 of 7" tells which link a waiting member depends on.
  const Step my_hop{me, n - 1};

  if (me == 0) {
    // At most `window` chunks in flight: a flood of sends slows every progress call down. The
    // next member posted all its receives, so each send completes without us.
    const size_t window = static_cast<size_t>(tuning.window > 0 ? tuning.window : 1);
    std::vector<RequestId> sends(chunks);
    for (size_t c = 0; c < chunks; ++c) {
      if (c >= window) p2p.wait(sends[c - window]);
      const size_t length = std::min(chunk, bytes - c * chunk);
      if (producer) producer->through(c * chunk + length);
      sends[c] = p2p.send(next, data + c * chunk, length, Step{0, n - 1});
    }
    p2p.wait_all();
    return;
  }
  std::vector<RequestId> receives(chunks);
  const Step incoming_hop{me - 1, n - 1};
  for (size_t c = 0; c < chunks; ++c)
    receives[c] = p2p.recv(previous, data + c * chunk, std::min(chunk, bytes - c * chunk), incoming_hop);
  for (size_t c = 0; c < chunks; ++c) {
    p2p.wait(receives[c]);
    if (has_next) p2p.send(next, data + c * chunk, std::min(chunk, bytes - c * chunk), my_hop);
  }
  p2p.wait_all();
}

}  // namespace xffl::comm::algorithms
