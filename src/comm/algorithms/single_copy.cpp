#include "comm/algorithms/single_copy.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "comm/algorithm_choice.h"
#include "comm/algorithms/chunks.h"
#include "comm/algorithms/scratch.h"
#include "comm/dtype.h"
#include "comm/reduce.h"

namespace xffl::comm::algorithms {

namespace {

// What a member tells the others about its buffers for one call.
struct Exposed {
  int64_t process = 0;
  uint64_t send = 0;
  uint64_t recv = 0;
};

uint64_t address_of(const void *pointer) { return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(pointer)); }

int wrap(int value, int n) { return ((value % n) + n) % n; }

// Every member's Exposed, from one message to and from every other member.
std::vector<Exposed> exchange_exposed(PointToPoint &p2p, const Exposed &mine, Step step) {
  const int n = p2p.size();
  std::vector<Exposed> all(static_cast<size_t>(n));
  all[static_cast<size_t>(p2p.index())] = mine;
  for (int peer = 0; peer < n; ++peer)
    if (peer != p2p.index()) p2p.recv(peer, &all[static_cast<size_t>(peer)], sizeof(Exposed), step);
  for (int peer = 0; peer < n; ++peer)
    if (peer != p2p.index()) p2p.send(peer, &all[static_cast<size_t>(p2p.index())], sizeof(Exposed), step);
  p2p.wait_all();
  return all;
}

// One-byte notices ("segment final", "done reading") to and from every other member: the receives
// are posted at once, sends go out when the caller says.
class Notices {
 public:
  Notices(PointToPoint &p2p, Step step) : p2p_(p2p), step_(step), incoming_(static_cast<size_t>(p2p.size())) {
    receives_.resize(incoming_.size());
    for (int peer = 0; peer < p2p.size(); ++peer)
      if (peer != p2p.index())
        receives_[static_cast<size_t>(peer)] = p2p.recv(peer, &incoming_[static_cast<size_t>(peer)], 1, step);
  }
  void send_all() {
    for (int peer = 0; peer < p2p_.size(); ++peer)
      if (peer != p2p_.index()) p2p_.send(peer, &token_, 1, step_);
  }
  void send_to(int peer) { p2p_.send(peer, &token_, 1, step_); }
  void wait_from(int peer) { p2p_.wait(receives_[static_cast<size_t>(peer)]); }

 private:
  PointToPoint &p2p_;
  Step step_;
  unsigned char token_ = 1;
  std::vector<unsigned char> incoming_;
  std::vector<RequestId> receives_;
};

// Writes the op-reduction over every member's [first, first + count) elements of `send` (dtype) to
// out, reading them in member order: out = ((x0 op x1) op x2) ... op x(n-1), each operand widened to
// the accumulation type first, AVG divided and narrowed at the end. out may alias this member's own
// send elements (in place): it is written only by the last combine of each chunk.
void reduce_segment(PointToPoint &p2p, PeerMemory &memory, const std::vector<Exposed> &exposed, const void *send,
                    size_t first, size_t count, xffl_dtype_t dtype, xffl_redop_t op, void *out, Step step) {
  const int n = p2p.size();
  const int me = p2p.index();
  const xffl_dtype_t type = accumulation_dtype(dtype, op);
  const bool widened = type != dtype;
  const bool finish_in_place = !widened && op != XFFL_AVG;  // the last combine writes out directly
  const size_t element = dtype_size(dtype);
  const size_t wide_element = dtype_size(type);
  const size_t per_chunk = chunk_elements(algorithm_choice::single_copy_chunk_bytes, wide_element);
  const size_t chunk = std::min(per_chunk, count);
  // Three regions, each starting on a cache line (so aligned for any element type).
  auto rounded = [](size_t bytes) { return (bytes + 63) / 64 * 64; };
  const size_t incoming_bytes = rounded(chunk * element), wide_bytes = rounded(chunk * wide_element);
  Scratch scratch(p2p, incoming_bytes + 2 * wide_bytes);
  unsigned char *incoming = scratch.data();               // a peer's chunk, as read
  unsigned char *operand = incoming + incoming_bytes;     // widened operand
  unsigned char *accumulator = operand + wide_bytes;      // partial result
  const auto *mine = static_cast<const unsigned char *>(send);
  auto *output = static_cast<unsigned char *>(out);

  for (size_t done = 0; done < count; done += chunk) {
    const size_t k = std::min(chunk, count - done);
    const size_t offset = (first + done) * element;
    auto operand_of = [&](int member) -> const void * {
      const void *value = mine + offset;
      if (member != me) {
        const Exposed &peer = exposed[static_cast<size_t>(member)];
        memory.read(member, peer.process, peer.send + offset, incoming, k * element, step);
        value = incoming;
      }
      if (!widened) return value;
      convert(value, dtype, operand, type, k);
      return operand;
    };
    const void *left = operand_of(0);
    if (left != static_cast<const void *>(mine + offset)) {  // keep it: the next read reuses the buffer
      std::memcpy(accumulator, left, k * wide_element);
      left = accumulator;
    }
    for (int member = 1; member < n; ++member) {
      const void *right = operand_of(member);
      void *target = (member == n - 1 && finish_in_place) ? static_cast<void *>(output + done * element) : accumulator;
      combine(target, left, right, k, type, op);
      left = accumulator;
    }
    if (finish_in_place) continue;
    if (op == XFFL_AVG) divide(accumulator, k, type, n);
    convert(accumulator, type, output + done * element, dtype, k);
  }
}

constexpr int kExposeStep = 0;

}  // namespace

void single_copy_allreduce(PointToPoint &p2p, PeerMemory &memory, const void *send, void *recv, size_t count,
                           xffl_dtype_t dtype, xffl_redop_t op) {
  const int n = p2p.size();
  const int me = p2p.index();
  const size_t element = dtype_size(dtype);
  const Step expose{kExposeStep, 3}, final_step{1, 3}, done_step{2, 3};
  const std::vector<Exposed> exposed =
      exchange_exposed(p2p, Exposed{memory.process_id(), address_of(send), address_of(recv)}, expose);
  Notices final_notices(p2p, final_step);  // after the exchange: its wait_all would wait for these
  Notices done_notices(p2p, done_step);
  const std::vector<size_t> bounds = balanced_bounds(count, n);
  auto *output = static_cast<unsigned char *>(recv);

  const size_t my_first = bounds[static_cast<size_t>(me)];
  const size_t my_count = bounds[static_cast<size_t>(me) + 1] - my_first;
  if (my_count)
    reduce_segment(p2p, memory, exposed, send, my_first, my_count, dtype, op, output + my_first * element, final_step);
  final_notices.send_all();
  // Starting at the next member spreads the readers over the members instead of all reading member 0.
  for (int k = 1; k < n; ++k) {
    const int owner = wrap(me + k, n);
    const size_t first = bounds[static_cast<size_t>(owner)];
    const size_t segment = bounds[static_cast<size_t>(owner) + 1] - first;
    final_notices.wait_from(owner);
    if (segment)
      memory.read(owner, exposed[static_cast<size_t>(owner)].process,
                  exposed[static_cast<size_t>(owner)].recv + first * element, output + first * element,
                  segment * element, final_step);
  }
  done_notices.send_all();
  p2p.wait_all();
}

void single_copy_reduce_scatter(PointToPoint &p2p, PeerMemory &memory, const void *send, void *recv,
                                size_t recv_count, xffl_dtype_t dtype, xffl_redop_t op) {
  const Step expose{kExposeStep, 2}, done_step{1, 2};
  const std::vector<Exposed> exposed = exchange_exposed(p2p, Exposed{memory.process_id(), address_of(send), 0}, expose);
  Notices done_notices(p2p, done_step);
  reduce_segment(p2p, memory, exposed, send, static_cast<size_t>(p2p.index()) * recv_count, recv_count, dtype, op,
                 recv, done_step);
  done_notices.send_all();
  p2p.wait_all();
}

void single_copy_allgather(PointToPoint &p2p, PeerMemory &memory, const void *send, void *recv, size_t send_count,
                           xffl_dtype_t dtype) {
  const int n = p2p.size();
  const int me = p2p.index();
  const size_t block = send_count * dtype_size(dtype);
  const Step expose{kExposeStep, 2}, done_step{1, 2};
  const std::vector<Exposed> exposed = exchange_exposed(p2p, Exposed{memory.process_id(), address_of(send), 0}, expose);
  Notices done_notices(p2p, done_step);
  auto *output = static_cast<unsigned char *>(recv);
  unsigned char *my_block = output + static_cast<size_t>(me) * block;
  if (send != my_block) std::memmove(my_block, send, block);
  for (int k = 1; k < n; ++k) {
    const int owner = wrap(me + k, n);
    memory.read(owner, exposed[static_cast<size_t>(owner)].process, exposed[static_cast<size_t>(owner)].send,
                output + static_cast<size_t>(owner) * block, block, expose);
  }
  done_notices.send_all();
  p2p.wait_all();
}

namespace {

// The root of a broadcast posts a receive of every other member's "done reading" token; the tokens land
// in the returned buffer, which must live until the root's wait_all.
std::vector<unsigned char> receive_done_tokens(PointToPoint &p2p, int root, Step done_step) {
  std::vector<unsigned char> done(static_cast<size_t>(p2p.size()));
  for (int peer = 0; peer < p2p.size(); ++peer)
    if (peer != root) p2p.recv(peer, &done[static_cast<size_t>(peer)], 1, done_step);
  return done;
}

}  // namespace

void single_copy_broadcast(PointToPoint &p2p, PeerMemory &memory, void *buffer, size_t bytes, int root) {
  const int n = p2p.size();
  const Step expose{kExposeStep, 2}, done_step{1, 2};
  unsigned char token = 1;
  if (p2p.index() == root) {
    const Exposed mine{memory.process_id(), address_of(buffer), 0};
    const std::vector<unsigned char> done = receive_done_tokens(p2p, root, done_step);
    for (int peer = 0; peer < n; ++peer)
      if (peer != root) p2p.send(peer, &mine, sizeof mine, expose);
    p2p.wait_all();
    return;
  }
  Exposed from;
  p2p.wait(p2p.recv(root, &from, sizeof from, expose));
  memory.read(root, from.process, from.send, buffer, bytes, expose);
  p2p.send(root, &token, 1, done_step);
  p2p.wait_all();
}

void single_copy_produced_broadcast(PointToPoint &p2p, PeerMemory &memory, void *buffer, size_t bytes, int root,
                                    WindowProducer &producer) {
  const int n = p2p.size();
  const Step expose{kExposeStep, 2}, done_step{1, 2};
  const size_t windows = producer.windows();
  const size_t window_bytes = producer.window_bytes();
  unsigned char token = 1;
  if (p2p.index() == root) {
    const Exposed mine{memory.process_id(), address_of(buffer), 0};
    const std::vector<unsigned char> done = receive_done_tokens(p2p, root, done_step);
    // One notice per window and member, in window order: a member reads window w once its w-th came.
    for (size_t w = 0; w < windows; ++w) {
      producer.through(std::min(bytes, (w + 1) * window_bytes));
      for (int peer = 0; peer < n; ++peer)
        if (peer != root) p2p.send(peer, &mine, sizeof mine, expose);
    }
    p2p.wait_all();
    return;
  }
  std::vector<Exposed> from(windows);
  std::vector<RequestId> notices(windows);
  for (size_t w = 0; w < windows; ++w) notices[w] = p2p.recv(root, &from[w], sizeof(Exposed), expose);
  auto *data = static_cast<unsigned char *>(buffer);
  for (size_t w = 0; w < windows; ++w) {
    p2p.wait(notices[w]);
    const size_t first = w * window_bytes;
    memory.read(root, from[w].process, from[w].send + first, data + first, std::min(window_bytes, bytes - first),
                expose);
  }
  p2p.send(root, &token, 1, done_step);
  p2p.wait_all();
}

}  // namespace xffl::comm::algorithms
