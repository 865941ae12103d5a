#include <algorithm>
#include <vector>

#include "comm/algorithms/chunks.h"
#include "comm/algorithms/folding.h"
#include "comm/algorithms/schedules.h"
#include "comm/algorithms/scratch.h"
#include "comm/dtype.h"
#include "comm/reduce.h"

namespace xffl::comm::algorithms {

namespace {

// Elements [first, first + count) of `data` (element_size bytes each) to or from `peer`, in messages of
// per_chunk elements; nothing for an empty range (both sides know its size). The ids of the messages.
std::vector<RequestId> post_range(PointToPoint &p2p, bool send, int peer, const void *data, size_t first,
                                  size_t count, size_t element_size, size_t per_chunk, Step step) {
  std::vector<RequestId> requests;
  auto *bytes = static_cast<unsigned char *>(const_cast<void *>(data));
  for (size_t done = 0; done < count; done += per_chunk) {
    const size_t n = std::min(per_chunk, count - done);
    unsigned char *at = bytes + (first + done) * element_size;
    requests.push_back(send ? p2p.send(peer, at, n * element_size, step) : p2p.recv(peer, at, n * element_size, step));
  }
  return requests;
}

}  // namespace

// Over the largest power of two p, the other members folded in first as in recursive doubling
// (folding.h): the one folded in reduces its neighbour's input with its own (the neighbour's on the
// left) and sends it the final output last. The p members cut the buffer into p balanced blocks.
// Reduce-scatter, mask = 1, 2, .. p/2: partner v ^ mask, with whom this member shares the blocks
// [lo, hi) it still reduces; the lower partner keeps the lower half and sends the upper, the upper
// partner the reverse; each reduces what it keeps with what it receives, chunk by chunk as the chunks
// arrive, and so ends owning one block alone (block bit-reverse(v)). One member reduces each element at
// each step (lower partner's operand on the left), so the others only ever copy its bits: every member
// ends with the same bits whatever loop or vector width each runs. finish() makes that block final in
// the output. All-gather, mask = p/2, .. 2, 1: partners swap the blocks each holds final, which doubles
// them. Each member sends and receives (p - 1) / p of the buffer in each half, as the ring does, in
// 2 log2(p) steps instead of 2 (n - 1).
// Nearest partners first (as MPICH's allreduce): half the buffer goes to the member next to this
// one, a quarter to the one two away, and only 1/p to the farthest. A group lists its members in rank
// order and the ranks of a node (of a facility) are consecutive, so the large exchanges stay on a node
// and only the small ones cross to another: with two facilities of two ranks, each member sends a
// quarter of the buffer across the link in each half instead of half of it
// (bench/facilities/world_allreduce.sh).
void halving_doubling_allreduce(PointToPoint &p2p, size_t count, const ReduceJob &job, const Tuning &tuning) {
  const int me = p2p.index();
  const Folding fold(p2p.size(), me);
  const int p = fold.p;
  const int total_steps = 2 * fold.log_p + (fold.extra ? 2 : 0);
  const size_t element = dtype_size(job.type);
  const size_t output_element = job.output_element_size;
  const size_t per_chunk = chunk_elements(tuning.chunk_bytes, element);
  const size_t per_output_chunk = chunk_elements(tuning.chunk_bytes, output_element);
  if (fold.folded_away) {
    post_range(p2p, true, me + 1, job.input, 0, count, element, per_chunk, Step{0, total_steps});
    post_range(p2p, false, me + 1, job.output, 0, count, output_element, per_output_chunk,
               Step{total_steps - 1, total_steps});
    p2p.wait_all();
    return;
  }

  const std::vector<size_t> bounds = balanced_bounds(count, p);
  // What arrives at once: the folded-in member's whole buffer, else the first half it keeps (the
  // lower half holds the larger blocks).
  Scratch incoming(p2p, (fold.folded_in ? count : bounds[static_cast<size_t>(p / 2)]) * element);
  const auto *input = static_cast<const unsigned char *>(job.input);
  auto *partial = static_cast<unsigned char *>(job.partial);
  const unsigned char *held = input;  // where this member's partial results are: its input until it reduced

  if (fold.folded_in) {
    const std::vector<RequestId> arrivals =
        post_range(p2p, false, me - 1, incoming.data(), 0, count, element, per_chunk, Step{0, total_steps});
    for (size_t c = 0; c < arrivals.size(); ++c) {
      p2p.wait(arrivals[c]);
      const size_t first = c * per_chunk, n_chunk = std::min(per_chunk, count - first);
      combine(partial + first * element, incoming.data() + first * element, input + first * element, n_chunk,
              job.type, job.op);
    }
    held = partial;
  }
  int step = fold.extra ? 1 : 0;
  const int virtual_index = fold.virtual_index;

  int lo = 0, hi = p;  // the blocks this member still reduces, then the blocks it holds final
  for (int mask = 1; mask < p; mask <<= 1, ++step) {
    const int partner = fold.real_index(virtual_index ^ mask);
    const bool lower = (virtual_index & mask) == 0;
    const int mid = lo + (hi - lo) / 2;
    const int keep_lo = lower ? lo : mid, keep_hi = lower ? mid : hi;
    const int give_lo = lower ? mid : lo, give_hi = lower ? hi : mid;
    const size_t keep_first = bounds[static_cast<size_t>(keep_lo)];
    const size_t keep_count = bounds[static_cast<size_t>(keep_hi)] - keep_first;
    const size_t give_first = bounds[static_cast<size_t>(give_lo)];
    const size_t give_count = bounds[static_cast<size_t>(give_hi)] - give_first;
    const Step at{step, total_steps};
    const std::vector<RequestId> arrivals =
        post_range(p2p, false, partner, incoming.data(), 0, keep_count, element, per_chunk, at);
    post_range(p2p, true, partner, held, give_first, give_count, element, per_chunk, at);
    for (size_t c = 0; c < arrivals.size(); ++c) {
      p2p.wait(arrivals[c]);
      const size_t first = c * per_chunk, n_chunk = std::min(per_chunk, keep_count - first);
      const unsigned char *mine = held + (keep_first + first) * element;
      const unsigned char *theirs = incoming.data() + first * element;
      combine(partial + (keep_first + first) * element, lower ? mine : theirs, lower ? theirs : mine, n_chunk,
              job.type, job.op);
    }
    p2p.wait_all();  // the incoming scratch is free again, and nothing this step sent is still read
    held = partial;
    lo = keep_lo;
    hi = keep_hi;
  }

  const size_t my_first = bounds[static_cast<size_t>(lo)];
  job.finish(my_first, bounds[static_cast<size_t>(hi)] - my_first);

  for (int mask = p / 2; mask >= 1; mask >>= 1, ++step) {
    const int partner = fold.real_index(virtual_index ^ mask);
    const bool upper = (virtual_index & mask) != 0;  // this member kept the upper half at this mask
    const int held_blocks = hi - lo;
    const int their_lo = upper ? lo - held_blocks : hi, their_hi = upper ? lo : hi + held_blocks;
    const size_t their_first = bounds[static_cast<size_t>(their_lo)];
    const size_t mine_first = bounds[static_cast<size_t>(lo)];
    const Step at{step, total_steps};
    post_range(p2p, false, partner, job.output, their_first, bounds[static_cast<size_t>(their_hi)] - their_first,
               output_element, per_output_chunk, at);
    post_range(p2p, true, partner, job.output, mine_first, bounds[static_cast<size_t>(hi)] - mine_first,
               output_element, per_output_chunk, at);
    p2p.wait_all();
    lo = std::min(lo, their_lo);
    hi = std::max(hi, their_hi);
  }

  if (fold.folded_in) {
    post_range(p2p, true, me - 1, job.output, 0, count, output_element, per_output_chunk,
               Step{total_steps - 1, total_steps});
    p2p.wait_all();
  }
}

}  // namespace xffl::comm::algorithms
