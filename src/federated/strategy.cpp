// What every strategy shares: the check before the schedule, and the default of several buffers.
#include "federated/strategy.h"

#include "federated/buckets.h"
#include "federated/weights.h"
#include "federated/wire/error_feedback.h"
#include "federated/wire/wan_hop.h"

namespace xffl::federated {

void Strategy::average(const Roles &roles, void *buf, size_t count, xffl_dtype_t dtype, void *stream) const {
  check(roles, dtype);
  wire::require_supported(roles, dtype);
  schedule(roles, buf, count, dtype, stream);
}

void Strategy::average_many(const Roles &roles, void *const *bufs, const size_t *counts, size_t n,
                            xffl_dtype_t dtype, void *stream) const {
  check(roles, dtype);
  wire::require_supported(roles, dtype);
  schedule_many(roles, bufs, counts, n, dtype, stream);
}

void Strategy::check(const Roles &roles, xffl_dtype_t dtype) const { require_floating_when_weighted(roles, dtype); }

void Strategy::schedule_many(const Roles &roles, void *const *bufs, const size_t *counts, size_t n,
                             xffl_dtype_t dtype, void *stream) const {
  average_in_buckets(*roles.federated, bufs, counts, n, dtype, stream,
                     [&](void *buf, size_t count) { schedule(roles, buf, count, dtype, stream); });
}

void Averaging::begin_error_feedback(void *const *bufs, const size_t *counts, size_t n) const {
  if (roles.error_feedback) roles.error_feedback->begin(bufs, counts, n, roles.wire_format);
}

}  // namespace xffl::federated
