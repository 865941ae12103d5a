#include "comm/algorithms/schedules.h"

#include <algorithm>

#include "comm/algorithms/chunks.h"
#include "comm/algorithms/scratch.h"
#include "comm/dtype.h"
#include "comm/reduce.h"

namespace xffl::comm::algorithms {

namespace {
int wrap(int value, int n) { return ((value % n) + n) % n; }
}  // namespace

// Reduce-scatter step s: send segment (me - s - 1), receive segment (me - s - 2) and reduce it, so
// that after n - 1 steps segment me is complete. All-gather step s: send segment (me - s), receive
// (me - s - 1). A segment reduced in step s is the one sent in step s + 1, chunk by chunk.
//
// Receives of the all-gather land in `output` where earlier sends of the same chunks came from (in
// place). That is safe: a chunk's final value can only arrive after the right neighbour consumed
// every contribution to it, including ours.
void ring_reduce(PointToPoint &p2p, const RingChunks &chunks, const RingReduce &job, const Tuning &tuning) {
  const int n = p2p.size();
  const int me = p2p.index();
  const int right = wrap(me + 1, n);
  const int left = wrap(me - 1, n);
  const bool gather = job.output != nullptr;
  const int total_steps = gather ? 2 * (n - 1) : n - 1;
  const size_t element = dtype_size(job.type);
  const size_t per_chunk = chunks.per_chunk();

  const auto *input = static_cast<const unsigned char *>(job.input);
  auto *partial = static_cast<unsigned char *>(job.partial);
  auto *output = static_cast<unsigned char *>(job.output);

  const std::vector<RingChunks::Arrival> arrivals = chunks.arrivals(me, total_steps);

  const size_t window = static_cast<size_t>(std::max(1, tuning.window));
  // A slot per reduce-scatter receive in flight, and never more slots than such receives: they come
  // first among the arrivals, so with that many slots each has its own.
  size_t staged = 0;
  while (staged < arrivals.size() && arrivals[staged].step < n - 1) ++staged;
  const size_t slots = std::max<size_t>(1, std::min(window, staged));
  Scratch staging(p2p, slots * per_chunk * element);
  auto staging_slot = [&](size_t k) { return staging.data() + (k % slots) * per_chunk * element; };
  std::vector<RequestId> receives(arrivals.size());
  size_t posted = 0;
  auto post_receives = [&](size_t upto) {
    for (; posted < std::min(upto, arrivals.size()); ++posted) {
      const RingChunks::Arrival &a = arrivals[posted];
      void *target = a.step < n - 1 ? static_cast<void *>(staging_slot(posted))
                                    : static_cast<void *>(output + a.span.first * job.output_element_size);
      const size_t bytes = a.span.count * (a.step < n - 1 ? element : job.output_element_size);
      receives[posted] = p2p.recv(left, target, bytes, Step{a.step, total_steps});
    }
  };

  // My own contribution goes out `window` chunks ahead of what I have received, not all at once:
  // a flood of sends fills UCX's queues and every progress call then walks them (measured: 2x
  // slower). Deadlock-free: my chunk c + window only waits for my arrival c, which my left
  // neighbour sent under the same rule, down to the first `window` chunks everyone posts at once.
  const std::vector<Span> own_chunks = chunks.segment_chunks(wrap(me - 1, n));
  size_t own_posted = 0;
  auto post_own = [&](size_t upto) {
    for (; own_posted < std::min(upto, own_chunks.size()); ++own_posted) {
      const Span &own = own_chunks[own_posted];
      p2p.send(right, input + own.first * element, own.count * element, Step{0, total_steps});
    }
  };

  post_receives(window);
  post_own(window);
  for (size_t k = 0; k < arrivals.size(); ++k) {
    const RingChunks::Arrival &arrival = arrivals[k];
    const int step = arrival.step;
    const Span &a = arrival.span;
    p2p.wait(receives[k]);
    post_own(k + 1 + window);
    if (step < n - 1) {
      combine(partial + a.first * element, staging_slot(k), input + a.first * element, a.count, job.type, job.op);
      post_receives(k + 1 + window);  // the slot just reduced is free again
      if (step < n - 2) {
        p2p.send(right, partial + a.first * element, a.count * element, Step{step + 1, total_steps});
      } else {
        job.finish(a.first, a.count);
        if (job.delivered) job.delivered(a.first, a.count);
        if (gather)
          p2p.send(right, output + a.first * job.output_element_size, a.count * job.output_element_size,
                   Step{step + 1, total_steps});
      }
    } else {
      post_receives(k + 1 + window);
      if (job.delivered) job.delivered(a.first, a.count);
      if (step < total_steps - 1)
        p2p.send(right, output + a.first * job.output_element_size, a.count * job.output_element_size,
                 Step{step + 1, total_steps});
    }
  }
  post_own(own_chunks.size());
  p2p.wait_all();
}

}  // namespace xffl::comm::algorithms
