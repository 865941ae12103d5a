#include <cstring>
#include <utility>

#include "comm/algorithm_choice.h"
#include "comm/algorithms/chunks.h"
#include "comm/algorithms/folding.h"
#include "comm/algorithms/schedules.h"
#include "comm/algorithms/scratch.h"
#include "comm/dtype.h"
#include "comm/reduce.h"
#include "comm/wide_vectors.h"

namespace xffl::comm::algorithms {

// Over the largest power of two p, the other members folded in first (folding.h): the p members
// exchange with partner (v ^ mask) for mask = 1, 2, 4, ...; both partners compute (lower block) op
// (upper block) with the same loop, combine's into-left form (out == left), so both hold the same
// bits: the lower one into the block it holds, the
// upper one into the block it received, which it holds from then on (the two buffers swap; the result
// ends in the caller's, copied there if it is in the scratch). Not the lower one into-left and the upper
// one into-right: a sum or product of two NaNs keeps the payload of the operand the instruction takes
// first, and the compiler orders the operands of a commuting operation as it likes in each loop (GCC 12
// keeps the right's payload in the vectorised part of one form and the left's in its scalar tail), so the
// replicas would differ in those NaNs' bits. One loop gives the same bits for the same operands at the
// same positions: both partners run it on the same count, and below the size of its AVX-512 copy
// (wide_vectors.h), so partners on hosts with and without AVX-512 run the same copy too.
static_assert(algorithm_choice::small_allreduce_bytes < kAvx512From,
              "recursive doubling's partners on hosts with and without AVX-512 would run different copies");
void recursive_doubling_allreduce(PointToPoint &p2p, void *buffer, size_t count, xffl_dtype_t type,
                                  xffl_redop_t op, const Tuning &tuning) {
  const int me = p2p.index();
  const Folding fold(p2p.size(), me);
  const int total_steps = fold.log_p + (fold.extra ? 2 : 0);
  const size_t bytes = count * dtype_size(type);
  const size_t chunk = tuning.chunk_bytes;
  if (fold.folded_away) {
    send_chunked(p2p, me + 1, buffer, bytes, chunk, Step{0, total_steps});
    recv_chunked(p2p, me + 1, buffer, bytes, chunk, Step{total_steps - 1, total_steps});
    p2p.wait_all();
    return;
  }
  Scratch incoming(p2p, bytes);
  if (fold.folded_in) {
    recv_chunked(p2p, me - 1, incoming.data(), bytes, chunk, Step{0, total_steps});
    p2p.wait_all();
    combine(buffer, incoming.data(), buffer, count, type, op);
  }
  int step = fold.extra ? 1 : 0;

  void *held = buffer, *spare = incoming.data();  // this member's partial result; the partner's block
  for (int mask = 1; mask < fold.p; mask <<= 1, ++step) {
    const int partner_virtual = fold.virtual_index ^ mask;
    const int partner = fold.real_index(partner_virtual);
    recv_chunked(p2p, partner, spare, bytes, chunk, Step{step, total_steps});
    send_chunked(p2p, partner, held, bytes, chunk, Step{step, total_steps});
    p2p.wait_all();
    if (partner_virtual < fold.virtual_index) {
      combine(spare, spare, held, count, type, op);
      std::swap(held, spare);
    } else {
      combine(held, held, spare, count, type, op);
    }
  }
  if (held != buffer) std::memcpy(buffer, held, bytes);

  if (fold.folded_in) {
    send_chunked(p2p, me - 1, buffer, bytes, chunk, Step{total_steps - 1, total_steps});
    p2p.wait_all();
  }
}

}  // namespace xffl::comm::algorithms
