// extern "C" shims of xffl/federated.h: pick this rank's communicators and role, then average.
#include "capi/guard.h"
#include "comm/dtype.h"
#include "federated/average.h"
#include "state/distributed_state.h"
#include "xffl/federated.h"

using xffl::capi::require_arg;

namespace {

xffl::federated::Roles roles_of(xffl_state_t *st, void *stream) {
  if (!st->is_federated_scaling_setup())
    xffl::fail(XFFL_ESTATE, "federated averaging needs xffl_federated_scaling first");
  const xffl::topology::RankPlan &plan = st->plan();
  xffl::federated::Roles roles;
  roles.strategy = static_cast<xffl_federated_strategy_t>(st->options().get(XFFL_OPT_FEDERATED_STRATEGY));
  xffl_group *federated = st->group(XFFL_GROUP_FEDERATED, 0);
  roles.federated = &federated->communicator();
  if (stream && federated->backend_kind() != XFFL_BACKEND_NCCL)
    xffl::fail(XFFL_EINVAL, "stream must be NULL for host memory (backend is not NCCL)");
  roles.is_sender = plan.is_sender.value_or(true);
  roles.federated_groups = *plan.federated_world_size;
  roles.federated_rank = *plan.federated_rank;
  const std::vector<double> &weights = st->federated_weights();
  if (!weights.empty() && federated->backend_kind() == XFFL_BACKEND_NCCL)
    xffl::fail(XFFL_EUNSUPPORTED, "federated weights with backend nccl: device buffers are not scaled yet");
  if (!weights.empty()) {
    double sum = 0;
    for (double w : weights) sum += w;
    roles.weight_factor = static_cast<double>(weights.size()) * weights[static_cast<size_t>(*plan.federated_rank)] / sum;
  }
  if (plan.replica_group) {
    xffl_group *replica = st->group(XFFL_GROUP_REPLICA, 0);
    const int sender = plan.receive_from.value_or(plan.rank);
    roles.sender_index = replica->members().index_of(sender);
    if (roles.strategy == XFFL_FEDAVG_FLAT) {
      const auto &sizes = *plan.federated_local_size;
      for (int s : sizes)
        if (s != sizes[0])
          xffl::fail(XFFL_EINVAL, "strategy FLAT needs equal federated sizes (non-senders of unequal groups have "
                                  "no partner across groups); use XFFL_FEDAVG_HIERARCHICAL");
    } else {
      roles.replica = &replica->communicator();
    }
  }
  return roles;
}

// Buckets of _many: large enough to amortise a collective's latency, small enough to stay in cache-friendly
// staging memory and to balance buckets across streams.
constexpr size_t kBucketBytes = size_t{16} << 20;

void check_buffer(const void *buf, size_t count, int dtype) {
  if (!xffl::comm::valid_dtype(dtype)) xffl::fail(XFFL_EINVAL, "unknown dtype ", dtype);
  if (count > 0 && !buf) xffl::fail(XFFL_EINVAL, "buf is NULL with count ", count);
}

}  // namespace

extern "C" {

XFFL_API xffl_status_t xffl_federated_average(xffl_state_t *st, void *buf, size_t count, xffl_dtype_t dtype,
                                              void *stream) {
  XFFL_API_BEGIN
  require_arg(st, __func__, "st");
  check_buffer(buf, count, dtype);
  xffl::federated::average(roles_of(st, stream), buf, count, dtype, stream);
  XFFL_API_END("xffl_federated_average")
}

XFFL_API xffl_status_t xffl_federated_average_many(xffl_state_t *st, void *const *bufs, const size_t *counts,
                                                   size_t n, xffl_dtype_t dtype, void *stream) {
  XFFL_API_BEGIN
  require_arg(st, __func__, "st");
  if (n > 0) {
    require_arg(bufs, __func__, "bufs");
    require_arg(counts, __func__, "counts");
  }
  for (size_t i = 0; i < n; ++i) check_buffer(bufs[i], counts[i], dtype);
  const xffl::federated::Roles roles = roles_of(st, stream);
  // Device buffers are averaged one by one: buckets are staged through host memory.
  const bool device_memory = st->group(XFFL_GROUP_FEDERATED, 0)->backend_kind() == XFFL_BACKEND_NCCL;
  xffl::federated::average_many(roles, bufs, counts, n, dtype, stream, device_memory ? 0 : kBucketBytes);
  XFFL_API_END("xffl_federated_average_many")
}

XFFL_API xffl_status_t xffl_set_federated_weights(xffl_state_t *st, const double *weights, size_t n) {
  XFFL_API_BEGIN
  require_arg(st, __func__, "st");
  if (n > 0) require_arg(weights, __func__, "weights");
  st->set_federated_weights(std::vector<double>(weights, weights + n));
  XFFL_API_END("xffl_set_federated_weights")
}

}  // extern "C"
