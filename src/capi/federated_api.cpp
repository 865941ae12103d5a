// extern "C" shims of xffl/federated.h: argument checks, then the state's federated strategy.
#include <limits>
#include <string>
#include <vector>

#include "capi/guard.h"
#include "comm/dtype.h"
#include "state/distributed_state.h"
#include "xffl/federated.h"

using xffl::capi::require_arg;

namespace {

// name: "buf", or "bufs[i]" for _many. Refuses a count whose size in bytes does not fit in size_t, as the
// collectives do (collective_api.cpp), before anything is read or written.
void check_buffer(const void *buf, size_t count, int dtype, const std::string &name) {
  if (!xffl::comm::valid_dtype(dtype)) xffl::fail(XFFL_EINVAL, "unknown dtype ", dtype);
  if (count > 0 && !buf) xffl::fail(XFFL_EINVAL, name, " is NULL with count ", count);
  const size_t size = xffl::comm::dtype_size(static_cast<xffl_dtype_t>(dtype));
  if (count > std::numeric_limits<size_t>::max() / size)
    xffl::fail(XFFL_EINVAL, "count ", count, " of ", xffl::comm::dtype_name(static_cast<xffl_dtype_t>(dtype)), " for ",
               name, " overflows the address space");
}

}  // namespace

extern "C" {

XFFL_API xffl_status_t xffl_federated_average(xffl_state_t *st, void *buf, size_t count, xffl_dtype_t dtype,
                                              void *stream) {
  XFFL_API_BEGIN
  require_arg(st, "st");
  XFFL_API_ENTER(st, "xffl_federated_average");
  check_buffer(buf, count, dtype, "buf");
  st->federated_averaging(stream).average(buf, count, dtype, stream);
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
  size_t total_bytes = 0;  // the buckets add buffers up: their sum must fit too
  for (size_t i = 0; i < n; ++i) {
    check_buffer(bufs[i], counts[i], dtype, "bufs[" + std::to_string(i) + "]");
    const size_t bytes = counts[i] * xffl::comm::dtype_size(dtype);
    if (bytes > std::numeric_limits<size_t>::max() - total_bytes)
      xffl::fail(XFFL_EINVAL, "counts[0..", i, "] add up to more bytes than the address space holds (counts[", i,
                 "] = ", counts[i], ")");
    total_bytes += bytes;
  }
  st->federated_averaging(stream).average_many(bufs, counts, n, dtype, stream);
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
