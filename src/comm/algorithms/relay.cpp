#include "comm/algorithms/relay.h"

#include <algorithm>
#include <deque>
#include <vector>

#include "comm/algorithms/chunks.h"
#include "comm/algorithms/collectives.h"
#include "comm/algorithms/schedules.h"
#include "comm/dtype.h"

namespace xffl::comm::algorithms {

namespace {

int relative(int index, int root, int n) { return (index - root + n) % n; }
int absolute(int relative_index, int root, int n) { return (relative_index + root) % n; }

// Whether the sender relays the federated group's ring chunk by chunk as it delivers them (else it
// takes allreduce's schedule and then broadcasts): past recursive doubling's sizes, halving-doubling's
// too, whose results become final only at its end while the ring's do chunk by chunk. The sender and
// its receivers decide by this.
bool relays_the_ring(size_t count, xffl_dtype_t dtype, int federated_size, const Tuning &tuning) {
  return allreduce_schedule(count, dtype, federated_size, tuning) != AllreduceSchedule::recursive_doubling;
}

}  // namespace

void allreduce_and_relay(PointToPoint &federated, PointToPoint &relay, void *buffer, size_t count, xffl_dtype_t dtype,
                         xffl_redop_t op, const Tuning &tuning) {
  const int n = federated.size();
  const int hops = relay.size() - 1;
  if (count == 0) return;
  if (hops == 0) return allreduce(federated, buffer, buffer, count, dtype, op, tuning);
  if (!relays_the_ring(count, dtype, n, tuning)) {
    allreduce(federated, buffer, buffer, count, dtype, op, tuning);
    return broadcast(relay, buffer, count, dtype, relay.index(), tuning);
  }

  const size_t element = dtype_size(dtype);
  auto *bytes = static_cast<unsigned char *>(buffer);
  const int next = absolute(1, relay.index(), relay.size());
  const Step my_hop{0, hops};
  const size_t window = static_cast<size_t>(std::max(1, tuning.window));
  std::deque<RequestId> relayed;  // sends down the chain still in flight, oldest first
  // At most `window` chunks in flight down the chain, as the chain broadcast's root keeps it.
  ring_allreduce(federated, buffer, buffer, count, dtype, op, tuning, [&](size_t first, size_t chunk) {
    if (relayed.size() >= window) {
      relay.wait(relayed.front());
      relayed.pop_front();
    }
    relayed.push_back(relay.send(next, bytes + first * element, chunk * element, my_hop));
  });
  relay.wait_all();
}

void relay_receive(PointToPoint &relay, int root, void *buffer, size_t count, xffl_dtype_t dtype, xffl_redop_t op,
                   int federated_size, int sender_index, const Tuning &tuning) {
  if (count == 0 || relay.size() == 1) return;
  if (!relays_the_ring(count, dtype, federated_size, tuning)) return broadcast(relay, buffer, count, dtype, root, tuning);

  const size_t element = dtype_size(dtype);
  const int n = relay.size();
  const int me = relative(relay.index(), root, n);
  const bool has_next = me + 1 < n;
  const int next = absolute(me + 1, root, n);
  const int previous = absolute(me - 1, root, n);
  // The sender's ring, planned as ring_allreduce plans it: its chunks in the order it forwards them.
  const std::vector<Span> order =
      RingChunks::for_allreduce(count, dtype, op, federated_size, tuning).delivery_order(sender_index);
  auto *bytes = static_cast<unsigned char *>(buffer);

  std::vector<RequestId> receives(order.size());
  for (size_t c = 0; c < order.size(); ++c)
    receives[c] = relay.recv(previous, bytes + order[c].first * element, order[c].count * element,
                             Step{me - 1, n - 1});
  for (size_t c = 0; c < order.size(); ++c) {
    relay.wait(receives[c]);
    if (has_next)
      relay.send(next, bytes + order[c].first * element, order[c].count * element, Step{me, n - 1});
  }
  relay.wait_all();
}

}  // namespace xffl::comm::algorithms
