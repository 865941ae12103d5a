// What every strategy shares: the check before the schedule, and the default of several buffers.
#include "federated/strategy.h"

#include "federated/buckets.h"
#include "federated/weights.h"

namespace xffl::federated {

void Strategy::average(const Roles &roles, void *buf, size_t count, xffl_dtype_t dtype, void *stream) const {
  check(roles, dtype);
  schedule(roles, buf, count, dtype, stream);
}

void Strategy::average_many(const Roles &roles, void *const *bufs, const size_t *counts, size_t n,
                            xffl_dtype_t dtype, void *stream) const {
  check(roles, dtype);
  schedule_many(roles, bufs, counts, n, dtype, stream);
}

void Strategy::check(const Roles &roles, xffl_dtype_t dtype) const { require_floating_when_weighted(roles, dtype); }

void Strategy::schedule_many(const Roles &roles, void *const *bufs, const size_t *counts, size_t n,
                             xffl_dtype_t dtype, void *stream) const {
  average_in_buckets(*roles.federated, bufs, counts, n, dtype, stream,
                     [&](void *buf, size_t count) { schedule(roles, buf, count, dtype, stream); });
}

}  // namespace xffl::federated
