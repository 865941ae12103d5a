#include "collective_case.h"

#include <cstring>

#include "values.h"

namespace xffl_bench {
namespace {

// Contributor id for federated averaging: every replica of a federated group holds the same shard
// values (as after local training steps that agree), different groups hold different ones.
int federated_source(int federated_rank, int replica_local_rank) { return federated_rank * 3 + replica_local_rank; }

}  // namespace

Layout layout_for(Operation op, xffl_dtype_t dtype, size_t bytes, int group_size) {
  const size_t element = dtype_size(dtype);
  const auto n = static_cast<size_t>(group_size);
  Layout layout;
  layout.count = bytes / element;
  switch (op) {
    case Operation::allgather:
      layout.count -= layout.count % n;
      layout.send_count = layout.count / n;
      layout.recv_count = layout.count;
      break;
    case Operation::reduce_scatter:
      layout.count -= layout.count % n;
      layout.send_count = layout.count;
      layout.recv_count = layout.count / n;
      break;
    case Operation::allreduce:
      layout.send_count = layout.recv_count = layout.count;
      break;
    case Operation::broadcast:
    case Operation::federated_average:
      layout.send_count = layout.count;  // in place: one buffer
      layout.recv_count = 0;
      break;
  }
  layout.bytes = layout.count * element;
  return layout;
}

double busbw_factor(Operation op, int peers) {
  const double n = peers;
  switch (op) {
    case Operation::allreduce:
    case Operation::federated_average:
      return 2.0 * (n - 1) / n;
    case Operation::allgather:
    case Operation::reduce_scatter:
      return (n - 1) / n;
    case Operation::broadcast:
      return 1.0;
  }
  return 1.0;
}

bool reduces(Operation op) {
  return op == Operation::allreduce || op == Operation::reduce_scatter || op == Operation::federated_average;
}

CollectiveCase::CollectiveCase(const Options &opts, const Participant &who, const Layout &layout, void *send,
                               void *recv)
    : opts_(opts), who_(who), layout_(layout), send_(send), recv_(recv) {}

void CollectiveCase::prepare() const {
  const xffl_redop_t redop = opts_.redop;
  switch (opts_.op) {
    case Operation::allreduce:
    case Operation::reduce_scatter:
      fill(send_, layout_.send_count, opts_.dtype, who_.global_rank, 0, redop);
      std::memset(recv_, 0, layout_.recv_count * dtype_size(opts_.dtype));
      break;
    case Operation::allgather:
      fill(send_, layout_.send_count, opts_.dtype, who_.global_rank, 0, XFFL_SUM);
      std::memset(recv_, 0, layout_.recv_count * dtype_size(opts_.dtype));
      break;
    case Operation::broadcast:
      // Non-roots start from values the root never sends (contribution of another id).
      fill(send_, layout_.send_count, opts_.dtype, who_.group_rank == 0 ? who_.members.front() : who_.members.front() + 1,
           0, XFFL_SUM);
      break;
    case Operation::federated_average:
      fill(send_, layout_.send_count, opts_.dtype, federated_source(who_.federated_rank, who_.replica_local_rank), 0,
           XFFL_SUM);
      break;
  }
}

xffl_status_t CollectiveCase::run_once() const {
  switch (opts_.op) {
    case Operation::allreduce:
      return xffl_allreduce(who_.group, send_, recv_, layout_.count, opts_.dtype, opts_.redop, nullptr);
    case Operation::broadcast:
      return xffl_broadcast(who_.group, send_, layout_.count, opts_.dtype, who_.members.front(), nullptr);
    case Operation::allgather:
      return xffl_allgather(who_.group, send_, recv_, layout_.send_count, opts_.dtype, nullptr);
    case Operation::reduce_scatter:
      return xffl_reduce_scatter(who_.group, send_, recv_, layout_.recv_count, opts_.dtype, opts_.redop, nullptr);
    case Operation::federated_average:
      return xffl_federated_average(who_.state, send_, layout_.count, opts_.dtype, nullptr);
  }
  return XFFL_EINVAL;
}

size_t CollectiveCase::count_wrong() const {
  const xffl_dtype_t t = opts_.dtype;
  size_t wrong = 0;
  switch (opts_.op) {
    case Operation::allreduce:
      for (size_t i = 0; i < layout_.recv_count; ++i)
        wrong += !matches(load(recv_, i, t), reduced(who_.members, i, opts_.redop, t), t);
      break;
    case Operation::reduce_scatter: {
      const size_t first = static_cast<size_t>(who_.group_rank) * layout_.recv_count;
      for (size_t i = 0; i < layout_.recv_count; ++i)
        wrong += !matches(load(recv_, i, t), reduced(who_.members, first + i, opts_.redop, t), t);
      break;
    }
    case Operation::allgather:
      for (size_t k = 0; k < who_.members.size(); ++k)
        for (size_t i = 0; i < layout_.send_count; ++i)
          wrong += load(recv_, k * layout_.send_count + i, t) != contribution(who_.members[k], i, XFFL_SUM);
      break;
    case Operation::broadcast:
      for (size_t i = 0; i < layout_.send_count; ++i)
        wrong += load(send_, i, t) != contribution(who_.members.front(), i, XFFL_SUM);
      break;
    case Operation::federated_average: {
      std::vector<int> sources;
      for (int g = 0; g < who_.peers; ++g) sources.push_back(federated_source(g, who_.replica_local_rank));
      for (size_t i = 0; i < layout_.send_count; ++i)
        wrong += !matches(load(send_, i, t), reduced(sources, i, XFFL_AVG, t), t);
      break;
    }
  }
  return wrong;
}

}  // namespace xffl_bench
