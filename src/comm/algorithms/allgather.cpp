#include <algorithm>
#include <vector>

#include "comm/algorithms/chunks.h"
#include "comm/algorithms/schedules.h"

namespace xffl::comm::algorithms {

// Step s: send block (me - s) to the right, receive block (me - s - 1) from the left, chunk by
// chunk; a received chunk is forwarded in the next step as soon as it is complete. With a producer, my
// own chunk is made final just before it is posted; with a consumer, chunk c of every block is final
// once chunk c of the last step has arrived (the receives are waited for in order, and my own chunk c
// left before it), and the windows it completes are consumed then, after the sends it allows are posted.
void ring_allgather(PointToPoint &p2p, void *buffer, size_t block_bytes, const Tuning &tuning,
                    WindowProducer *producer, WindowConsumer *consumer) {
  const int n = p2p.size();
  const int me = p2p.index();
  const int right = (me + 1) % n;
  const int left = (me - 1 + n) % n;
  const int total_steps = n - 1;
  auto *data = static_cast<unsigned char *>(buffer);
  const size_t chunk = tuning.chunk_bytes;
  const size_t chunks = std::max<size_t>(1, chunk_count(block_bytes, chunk));
  auto block = [&](int b) { return data + static_cast<size_t>((b % n + n) % n) * block_bytes; };
  auto length = [&](size_t c) { return std::min(chunk, block_bytes - c * chunk); };

  std::vector<RequestId> receives(static_cast<size_t>(total_steps) * chunks);
  for (int s = 0; s < total_steps; ++s)
    for (size_t c = 0; c < chunks; ++c)
      receives[static_cast<size_t>(s) * chunks + c] = p2p.recv(left, block(me - s - 1) + c * chunk, length(c), Step{s, total_steps});
  // My own block goes out `window` chunks ahead of my arrivals (see ring.cpp for why and why it
  // cannot deadlock).
  const size_t window = static_cast<size_t>(tuning.window > 0 ? tuning.window : 1);
  size_t own_posted = 0;
  auto post_own = [&](size_t upto) {
    for (; own_posted < std::min(upto, chunks); ++own_posted) {
      if (producer) producer->through(own_posted * chunk + length(own_posted));
      p2p.send(right, block(me) + own_posted * chunk, length(own_posted), Step{0, total_steps});
    }
  };
  post_own(window);
  for (int s = 0; s < total_steps; ++s) {
    for (size_t c = 0; c < chunks; ++c) {
      const size_t k = static_cast<size_t>(s) * chunks + c;
      p2p.wait(receives[k]);
      post_own(k + 1 + window);
      if (s + 1 < total_steps) p2p.send(right, block(me - s - 1) + c * chunk, length(c), Step{s + 1, total_steps});
      else if (consumer) consumer->through(c * chunk + length(c));
    }
  }
  post_own(chunks);
  p2p.wait_all();
  if (consumer) consumer->all();
}

void dissemination_barrier(PointToPoint &p2p) {
  const int n = p2p.size();
  const int me = p2p.index();
  int total_steps = 0;
  while ((1 << total_steps) < n) ++total_steps;
  for (int step = 0, distance = 1; distance < n; ++step, distance <<= 1) {
    p2p.recv((me - distance + n) % n, nullptr, 0, Step{step, total_steps});
    p2p.send((me + distance) % n, nullptr, 0, Step{step, total_steps});
    p2p.wait_all();
  }
}

}  // namespace xffl::comm::algorithms
