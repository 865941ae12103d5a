#include "comm/algorithms/collectives.h"

#include <algorithm>
#include <cstring>

#include "comm/algorithm_choice.h"
#include "comm/algorithms/chunks.h"
#include "comm/algorithms/schedules.h"
#include "comm/algorithms/scratch.h"
#include "comm/dtype.h"
#include "comm/reduce.h"

namespace xffl::comm::algorithms {

namespace {

void copy_if_apart(const void *from, void *to, size_t bytes) {
  if (bytes && from != to) std::memmove(to, from, bytes);
}

unsigned char *at(void *base, size_t elements, size_t element_size) {
  return static_cast<unsigned char *>(base) + elements * element_size;
}

}  // namespace

AllreduceSchedule allreduce_schedule(size_t count, xffl_dtype_t dtype, int members, const Tuning &tuning) {
  const size_t bytes = count * dtype_size(dtype);
  if (bytes <= tuning.small_allreduce_bytes || count < static_cast<size_t>(members))
    return AllreduceSchedule::recursive_doubling;
  if (bytes <= tuning.halving_allreduce_bytes.value_or(algorithm_choice::halving_allreduce_bytes(members)))
    return AllreduceSchedule::halving_doubling;
  return AllreduceSchedule::ring;
}

namespace {

// The job of the ring and halving-doubling for an allreduce of send into recv: they read the
// contributions from, and build the partial results in, send and recv themselves, or a copy of send
// widened to the accumulation type (f16 and bf16 to f32, integer AVG to i64); finish(first, count)
// makes those elements final in recv: AVG's division, then the narrowing.
class AllreduceJob {
 public:
  AllreduceJob(PointToPoint &p2p, const void *send, void *recv, size_t count, xffl_dtype_t dtype, xffl_redop_t op)
      : type_(accumulation_dtype(dtype, op)), wide_(p2p, type_ != dtype ? count * dtype_size(type_) : 0) {
    const xffl_dtype_t type = type_;
    const bool widened = type != dtype;
    if (widened) convert(send, dtype, wide_.data(), type, count);
    job_.input = widened ? static_cast<const void *>(wide_.data()) : send;
    job_.partial = widened ? static_cast<void *>(wide_.data()) : recv;
    job_.type = type;
    job_.op = op;
    job_.output = recv;
    job_.output_element_size = dtype_size(dtype);
    const size_t element = dtype_size(dtype), reduce_element = dtype_size(type);
    const int members = p2p.size();
    void *const partial = job_.partial;
    job_.finish = [=](size_t first, size_t chunk) {
      void *reduced = at(partial, first, reduce_element);
      if (op == XFFL_AVG) divide(reduced, chunk, type, members);
      if (widened) convert(reduced, type, at(recv, first, element), dtype, chunk);
    };
  }
  const ReduceJob &job() const { return job_; }

 private:
  xffl_dtype_t type_;  // the accumulation type
  Scratch wide_;       // send widened to it, when it is wider
  ReduceJob job_;
};

}  // namespace

void ring_allreduce(PointToPoint &p2p, const void *send, void *recv, size_t count, xffl_dtype_t dtype,
                    xffl_redop_t op, const Tuning &tuning, const std::function<void(size_t, size_t)> &delivered) {
  const AllreduceJob allreduce(p2p, send, recv, count, dtype, op);
  RingReduce job;
  static_cast<ReduceJob &>(job) = allreduce.job();
  job.delivered = delivered;
  ring_reduce(p2p, RingChunks::for_allreduce(count, dtype, op, p2p.size(), tuning), job, tuning);
}

void allreduce(PointToPoint &p2p, const void *send, void *recv, size_t count, xffl_dtype_t dtype, xffl_redop_t op,
               const Tuning &tuning) {
  const int n = p2p.size();
  const size_t element = dtype_size(dtype);
  if (count == 0) return;
  if (n == 1) return copy_if_apart(send, recv, count * element);
  switch (allreduce_schedule(count, dtype, n, tuning)) {
    case AllreduceSchedule::ring: return ring_allreduce(p2p, send, recv, count, dtype, op, tuning);
    case AllreduceSchedule::halving_doubling:
      return halving_doubling_allreduce(p2p, count, AllreduceJob(p2p, send, recv, count, dtype, op).job(), tuning);
    case AllreduceSchedule::recursive_doubling: {
      // Recursive doubling reduces in place: the contributions go where the partial results are built.
      const AllreduceJob allreduce(p2p, send, recv, count, dtype, op);
      const ReduceJob &job = allreduce.job();
      copy_if_apart(job.input, job.partial, count * dtype_size(job.type));
      recursive_doubling_allreduce(p2p, job.partial, count, job.type, op, tuning);
      return job.finish(0, count);
    }
  }
}

void reduce_scatter(PointToPoint &p2p, const void *send, void *recv, size_t recv_count, xffl_dtype_t dtype,
                    xffl_redop_t op, const Tuning &tuning) {
  const int n = p2p.size();
  const size_t element = dtype_size(dtype);
  if (recv_count == 0) return;
  const size_t my_first = static_cast<size_t>(p2p.index()) * recv_count;
  if (n == 1) return copy_if_apart(send, recv, recv_count * element);

  const xffl_dtype_t reduce_type = accumulation_dtype(dtype, op);
  const size_t reduce_element = dtype_size(reduce_type);
  const size_t count = recv_count * static_cast<size_t>(n);
  // Partial sums need room of their own: send is read-only and recv holds one segment.
  Scratch work(p2p, count * reduce_element);
  RingReduce job;
  job.type = reduce_type;
  job.op = op;
  job.partial = work.data();
  if (reduce_type != dtype) {
    convert(send, dtype, work.data(), reduce_type, count);
    job.input = work.data();
  } else {
    job.input = send;
  }
  job.finish = [&](size_t first, size_t chunk) {
    void *reduced = at(job.partial, first, reduce_element);
    if (op == XFFL_AVG) divide(reduced, chunk, reduce_type, n);
    convert(reduced, reduce_type, at(recv, first - my_first, element), dtype, chunk);
  };
  // Messages of chunk_bytes in the reduce type: the output is written by finish, never sent.
  ring_reduce(p2p, RingChunks(block_bounds(recv_count, n), chunk_elements(tuning.chunk_bytes, reduce_element)), job,
              tuning);
}

void broadcast(PointToPoint &p2p, void *buffer, size_t count, xffl_dtype_t dtype, int root, const Tuning &tuning) {
  const size_t bytes = count * dtype_size(dtype);
  if (bytes == 0 || p2p.size() == 1) return;
  if (bytes <= tuning.small_broadcast_bytes)
    binomial_broadcast(p2p, buffer, bytes, root, tuning);
  else
    chain_broadcast(p2p, buffer, bytes, root, tuning);
}

void produced_broadcast(PointToPoint &p2p, void *buffer, size_t count, xffl_dtype_t dtype, int root,
                        WindowProducer &producer, const Tuning &tuning) {
  const size_t bytes = count * dtype_size(dtype);
  if (bytes == 0 || p2p.size() == 1 || bytes <= tuning.small_broadcast_bytes) {
    producer.all();
    return broadcast(p2p, buffer, count, dtype, root, tuning);
  }
  chain_broadcast(p2p, buffer, bytes, root, tuning, p2p.index() == root ? &producer : nullptr);
}

void allgather(PointToPoint &p2p, const void *send, void *recv, size_t send_count, xffl_dtype_t dtype,
               const Tuning &tuning) {
  const size_t block = send_count * dtype_size(dtype);
  if (block == 0) return;
  copy_if_apart(send, at(recv, static_cast<size_t>(p2p.index()), block), block);
  if (p2p.size() == 1) return;
  ring_allgather(p2p, recv, block, tuning);
}

void streamed_allgather(PointToPoint &p2p, const void *send, void *recv, size_t send_count, xffl_dtype_t dtype,
                        size_t window, const std::function<void(size_t first, size_t count)> &produce,
                        const std::function<void(size_t first, size_t count)> &consume, const Tuning &tuning) {
  const size_t element = dtype_size(dtype);
  const size_t block = send_count * element;
  if (block == 0) return;
  unsigned char *mine = at(recv, static_cast<size_t>(p2p.index()), block);
  // Each window produced goes to my block of recv, which the ring sends from.
  const std::function<void(size_t, size_t)> produce_into_place = [&](size_t first, size_t count) {
    if (produce) produce(first, count);
    copy_if_apart(static_cast<const unsigned char *>(send) + first * element, mine + first * element, count * element);
  };
  WindowProducer producer(produce_into_place, send_count, element, window);
  WindowConsumer consumer(consume, send_count, element, window);
  if (p2p.size() == 1) {
    producer.all();
    consumer.all();
    return;
  }
  ring_allgather(p2p, recv, block, tuning, &producer, &consumer);
}

void barrier(PointToPoint &p2p) {
  if (p2p.size() > 1) dissemination_barrier(p2p);
}

}  // namespace xffl::comm::algorithms
