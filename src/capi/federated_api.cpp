// extern "C" shims of xffl/federated.h: argument checks, then the state's roles and federated/average.
#include "capi/guard.h"
#include "comm/dtype.h"
#include "federated/average.h"
#include "state/distributed_state.h"
#include "xffl/federated.h"

using xffl::capi::require_arg;

namespace {

void check_buffer(const void *buf, size_t count, int dtype) {
  if (!xffl::comm::valid_dtype(dtype)) xffl::fail(XFFL_EINVAL, "unknown dtype ", dtype);
  if (count > 0 && !buf) xffl::fail(XFFL_EINVAL, "buf is NULL with count ", count);
}

}  // namespace

extern "C" {

XFFL_API xffl_status_t xffl_federated_average(xffl_state_t *st, void *buf, size_t count, xffl_dtype_t dtype,
                                              void *stream) {
  XFFL_API_BEGIN
  require_arg(st, "st");
  XFFL_API_ENTER(st, "xffl_federated_average");
  check_buffer(buf, count, dtype);
  xffl::federated::average(st->federated_roles(stream), buf, count, dtype, stream);
  XFFL_API_END("xffl_federated_average")
}

XFFL_API xffl_status_t xffl_federated_average_many(xffl_state_t *st, void *const *bufs, const size_t *counts,
                                                   size_t n, xffl_dtype_t dtype, void *stream) {
  XFFL_API_BEGIN
  require_arg(st, "st");
  XFFL_API_ENTER(st, "xffl_federated_average_many");
  if (n > 0) {
    require_arg(bufs, "bufs");
    require_arg(counts, "counts");
  }
  for (size_t i = 0; i < n; ++i) check_buffer(bufs[i], counts[i], dtype);
  xffl::federated::average_many(st->federated_roles(stream), bufs, counts, n, dtype, stream);
  XFFL_API_END("xffl_federated_average_many")
}

XFFL_API xffl_status_t xffl_set_federated_weights(xffl_state_t *st, const double *weights, size_t n) {
  XFFL_API_BEGIN
  require_arg(st, "st");
  XFFL_API_ENTER(st, "xffl_set_federated_weights");
  if (n > 0) require_arg(weights, "weights");
  st->set_federated_weights(std::vector<double>(weights, weights + n));
  XFFL_API_END("xffl_set_federated_weights")
}

}  // extern "C"
