#include "comm/algorithms/schedules.h"

#include <algorithm>

#include "comm/algorithms/chunks.h"
#include "comm/algorithms/scratch.h"
#include "comm/dtype.h"
#include "comm/reduce.h"

namespace xffl::comm::algorithms {

namespace {

// One received chunk, in the order the left neighbour sends them.
struct Arrival {
  int step;
  size_t first;
  size_t count;
};

int wrap(int value, int n) { return ((value % n) + n) % n; }

// Every chunk member `me` receives, step by step, chunk by chunk.
std::vector<Arrival> ring_arrivals(int n, int me, const std::vector<size_t> &bounds, size_t per_chunk,
                                   int total_steps) {
  std::vector<Arrival> arrivals;
  for (int s = 0; s < total_steps; ++s) {
    const int segment = s < n - 1 ? wrap(me - s - 2, n) : wrap(me - (s - (n - 1)) - 1, n);
    const size_t end = bounds[static_cast<size_t>(segment) + 1];
    for (size_t first = bounds[static_cast<size_t>(segment)]; first < end; first += per_chunk)
      arrivals.push_back({s, first, std::min(per_chunk, end - first)});
  }
  return arrivals;
}

}  // namespace

// Reduced in the last reduce-scatter step (n - 2): my own segment, final once finished; then every
// all-gather arrival is final as it lands.
std::vector<Span> ring_delivery_order(int n, int me, const std::vector<size_t> &bounds, size_t per_chunk) {
  std::vector<Span> order;
  for (const Arrival &a : ring_arrivals(n, me, bounds, per_chunk, 2 * (n - 1)))
    if (a.step >= n - 2) order.push_back({a.first, a.count});
  return order;
}

// Reduce-scatter step s: send segment (me - s - 1), receive segment (me - s - 2) and reduce it, so
// that after n - 1 steps segment me is complete. All-gather step s: send segment (me - s), receive
// (me - s - 1). A segment reduced in step s is the one sent in step s + 1, chunk by chunk.
//
// Receives of the all-gather land in `output` where earlier sends of the same chunks came from (in
// place). That is safe: a chunk's final value can only arrive after the right neighbour consumed
// every contribution to it, including ours.
void ring_reduce(PointToPoint &p2p, const RingReduce &job, const Tuning &tuning) {
  const int n = p2p.size();
  const int me = p2p.index();
  const int right = wrap(me + 1, n);
  const int left = wrap(me - 1, n);
  const bool gather = job.output != nullptr;
  const int total_steps = gather ? 2 * (n - 1) : n - 1;
  const size_t element = dtype_size(job.type);
  const size_t per_chunk = chunk_elements(tuning.chunk_bytes, std::max(element, job.output_element_size));

  const auto *input = static_cast<const unsigned char *>(job.input);
  auto *partial = static_cast<unsigned char *>(job.partial);
  auto *output = static_cast<unsigned char *>(job.output);

  auto for_each_chunk = [&](int segment, auto &&visit) {
    const size_t end = job.bounds[static_cast<size_t>(segment) + 1];
    for (size_t first = job.bounds[static_cast<size_t>(segment)]; first < end; first += per_chunk)
      visit(first, std::min(per_chunk, end - first));
  };

  const std::vector<Arrival> arrivals = ring_arrivals(n, me, job.bounds, per_chunk, total_steps);

  const size_t window = static_cast<size_t>(std::max(1, tuning.window));
  Scratch staging(p2p, window * per_chunk * element);
  auto staging_slot = [&](size_t k) { return staging.data() + (k % window) * per_chunk * element; };
  std::vector<RequestId> receives(arrivals.size());
  size_t posted = 0;
  auto post_receives = [&](size_t upto) {
    for (; posted < std::min(upto, arrivals.size()); ++posted) {
      const Arrival &a = arrivals[posted];
      void *target = a.step < n - 1 ? static_cast<void *>(staging_slot(posted))
                                    : static_cast<void *>(output + a.first * job.output_element_size);
      const size_t bytes = a.count * (a.step < n - 1 ? element : job.output_element_size);
      receives[posted] = p2p.recv(left, target, bytes, Step{a.step, total_steps});
    }
  };

  // My own contribution goes out `window` chunks ahead of what I have received, not all at once:
  // a flood of sends fills UCX's queues and every progress call then walks them (measured: 2x
  // slower). Deadlock-free: my chunk c + window only waits for my arrival c, which my left
  // neighbour sent under the same rule, down to the first `window` chunks everyone posts at once.
  std::vector<std::pair<size_t, size_t>> own_chunks;
  for_each_chunk(wrap(me - 1, n), [&](size_t first, size_t count) { own_chunks.emplace_back(first, count); });
  size_t own_posted = 0;
  auto post_own = [&](size_t upto) {
    for (; own_posted < std::min(upto, own_chunks.size()); ++own_posted) {
      const auto &[first, count] = own_chunks[own_posted];
      p2p.send(right, input + first * element, count * element, Step{0, total_steps});
    }
  };

  post_receives(window);
  post_own(window);
  for (size_t k = 0; k < arrivals.size(); ++k) {
    const Arrival &a = arrivals[k];
    p2p.wait(receives[k]);
    post_own(k + 1 + window);
    if (a.step < n - 1) {
      combine(partial + a.first * element, staging_slot(k), input + a.first * element, a.count, job.type, job.op);
      post_receives(k + 1 + window);  // the slot just reduced is free again
      if (a.step < n - 2) {
        p2p.send(right, partial + a.first * element, a.count * element, Step{a.step + 1, total_steps});
      } else {
        job.finish(a.first, a.count);
        if (job.delivered) job.delivered(a.first, a.count);
        if (gather)
          p2p.send(right, output + a.first * job.output_element_size, a.count * job.output_element_size,
                   Step{a.step + 1, total_steps});
      }
    } else {
      post_receives(k + 1 + window);
      if (job.delivered) job.delivered(a.first, a.count);
      if (a.step < total_steps - 1)
        p2p.send(right, output + a.first * job.output_element_size, a.count * job.output_element_size,
                 Step{a.step + 1, total_steps});
    }
  }
  post_own(own_chunks.size());
  p2p.wait_all();
}

}  // namespace xffl::comm::algorithms
