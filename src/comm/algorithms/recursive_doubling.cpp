#include "comm/algorithms/chunks.h"
#include "comm/algorithms/schedules.h"
#include "comm/algorithms/scratch.h"
#include "comm/dtype.h"
#include "comm/reduce.h"

namespace xffl::comm::algorithms {

// Members 0 .. 2*extra-1 pair up (2i, 2i+1): the even one hands its data to the odd one and waits for
// the result. The p remaining members renumber 0 .. p-1 and exchange with partner (v ^ mask) for
// mask = 1, 2, 4, ...; both partners compute (lower block) op (upper block), so both hold the same bits.
void recursive_doubling_allreduce(PointToPoint &p2p, void *buffer, size_t count, xffl_dtype_t type,
                                  xffl_redop_t op, const Tuning &tuning) {
  const int n = p2p.size();
  const int me = p2p.index();
  int p = 1;
  while (p * 2 <= n) p *= 2;
  const int extra = n - p;
  int log_p = 0;
  while ((1 << log_p) < p) ++log_p;
  const int total_steps = log_p + (extra ? 2 : 0);
  const size_t bytes = count * dtype_size(type);
  const size_t chunk = tuning.chunk_bytes;
  Scratch incoming(p2p, bytes);
  int step = 0;

  int virtual_index;
  if (me < 2 * extra) {
    if (me % 2 == 0) {
      send_chunked(p2p, me + 1, buffer, bytes, chunk, Step{0, total_steps});
      recv_chunked(p2p, me + 1, buffer, bytes, chunk, Step{total_steps - 1, total_steps});
      p2p.wait_all();
      return;
    }
    recv_chunked(p2p, me - 1, incoming.data(), bytes, chunk, Step{0, total_steps});
    p2p.wait_all();
    combine(buffer, incoming.data(), buffer, count, type, op);
    virtual_index = me / 2;
    step = 1;
  } else {
    virtual_index = me - extra;
    if (extra) step = 1;
  }

  auto real_index = [&](int v) { return v < extra ? 2 * v + 1 : v + extra; };
  for (int mask = 1; mask < p; mask <<= 1, ++step) {
    const int partner_virtual = virtual_index ^ mask;
    const int partner = real_index(partner_virtual);
    recv_chunked(p2p, partner, incoming.data(), bytes, chunk, Step{step, total_steps});
    send_chunked(p2p, partner, buffer, bytes, chunk, Step{step, total_steps});
    p2p.wait_all();
    if (partner_virtual < virtual_index)
      combine(buffer, incoming.data(), buffer, count, type, op);
    else
      combine(buffer, buffer, incoming.data(), count, type, op);
  }

  if (me < 2 * extra) {
    send_chunked(p2p, me - 1, buffer, bytes, chunk, Step{total_steps - 1, total_steps});
    p2p.wait_all();
  }
}

}  // namespace xffl::comm::algorithms
