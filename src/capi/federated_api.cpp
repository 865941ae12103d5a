// extern "C" shims of xffl/federated.h: argument checks, then the state's federated strategy.
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "capi/guard.h"
#include "comm/dtype.h"
#include "state/distributed_state.h"
#include "state/request.h"
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

// The buffers of _many, each as check_buffer, and their sum in bytes.
void check_buffers(void *const *bufs, const size_t *counts, size_t n, xffl_dtype_t dtype) {
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
}

// A request running `work` (the blocking schedule) on its own thread, holding the state's gate, tracked
// by the state so that its destroy waits for the run (state/request.h).
xffl_request_t *start_request(xffl_state_t &st, xffl::CallGate::RequestHold hold, const char *call,
                              std::function<void()> work) {
  auto handle = std::make_unique<xffl_request>();
  handle->request = std::make_shared<xffl::Request>(st.shared_call_gate(), std::move(hold), call, std::move(work));
  st.track_request(handle->request);
  return handle.release();
}

}  // namespace

extern "C" {

XFFL_API xffl_status_t xffl_federated_average(xffl_state_t *st, void *buf, size_t count, xffl_dtype_t dtype,
                                              void *stream) {
  XFFL_API_BEGIN
  require_arg(st, "st");
  XFFL_API_ENTER(st, "xffl_federated_average");
  check_buffer(buf, count, dtype, "buf");
  if (st->continues_facility_faults()) {
    st->federated_average_continuing(&buf, &count, 1, dtype, stream);
  } else {
    st->federated_averaging(stream).average(buf, count, dtype, stream);
    ++*st->completed_averages();  // XFFL_ATTR_FEDERATION_ROUND
  }
  XFFL_API_END("xffl_federated_average")
}

XFFL_API xffl_status_t xffl_federated_average_many(xffl_state_t *st, void *const *bufs, const size_t *counts,
                                                   size_t n, xffl_dtype_t dtype, void *stream) {
  XFFL_API_BEGIN
  require_arg(st, "st");
  XFFL_API_ENTER(st, "xffl_federated_average_many");
  check_buffers(bufs, counts, n, dtype);
  if (st->continues_facility_faults()) {
    st->federated_average_continuing(bufs, counts, n, dtype, stream);
  } else {
    st->federated_averaging(stream).average_many(bufs, counts, n, dtype, stream);
    ++*st->completed_averages();
  }
  XFFL_API_END("xffl_federated_average_many")
}

// The nonblocking averages (xffl/request.h): the gate is taken for the request before anything else, so
// the checks and the strategy's roles run as in the blocking call, on this thread; the schedule itself
// runs on the request's thread, with the same arguments.
XFFL_API xffl_status_t xffl_federated_average_start(xffl_state_t *st, void *buf, size_t count, xffl_dtype_t dtype,
                                                    void *stream, xffl_request_t **req) {
  XFFL_API_BEGIN
  require_arg(st, "st");
  xffl::CallGate::RequestHold hold = st->call_gate().begin_request("xffl_federated_average_start");
  require_arg(req, "req");
  check_buffer(buf, count, dtype, "buf");
  if (st->continues_facility_faults()) {
    const xffl::ContinuingAverage average = st->continuing_average(dtype, stream);
    *req = start_request(*st, std::move(hold), "xffl_federated_average_start",
                         [average, buf, count, dtype] {
                           void *bufs[1] = {buf};
                           const size_t counts[1] = {count};
                           average.run(bufs, counts, 1, dtype);
                         });
    return XFFL_OK;
  }
  const xffl::federated::Averaging averaging = st->federated_averaging(stream);
  *req = start_request(*st, std::move(hold), "xffl_federated_average_start",
                       [averaging, buf, count, dtype, stream, rounds = st->completed_averages()] {
                         averaging.average(buf, count, dtype, stream);
                         ++*rounds;
                       });
  XFFL_API_END("xffl_federated_average_start")
}

XFFL_API xffl_status_t xffl_federated_average_many_start(xffl_state_t *st, void *const *bufs, const size_t *counts,
                                                         size_t n, xffl_dtype_t dtype, void *stream,
                                                         xffl_request_t **req) {
  XFFL_API_BEGIN
  require_arg(st, "st");
  xffl::CallGate::RequestHold hold = st->call_gate().begin_request("xffl_federated_average_many_start");
  require_arg(req, "req");
  check_buffers(bufs, counts, n, dtype);
  std::vector<void *> buffers(bufs, bufs + n);  // the caller's arrays may go once this returns
  std::vector<size_t> sizes(counts, counts + n);
  if (st->continues_facility_faults()) {
    const xffl::ContinuingAverage average = st->continuing_average(dtype, stream);
    *req = start_request(*st, std::move(hold), "xffl_federated_average_many_start",
                         [average, buffers = std::move(buffers), sizes = std::move(sizes), dtype] {
                           average.run(buffers.data(), sizes.data(), buffers.size(), dtype);
                         });
    return XFFL_OK;
  }
  const xffl::federated::Averaging averaging = st->federated_averaging(stream);
  *req = start_request(*st, std::move(hold), "xffl_federated_average_many_start",
                       [averaging, buffers = std::move(buffers), sizes = std::move(sizes), dtype, stream,
                        rounds = st->completed_averages()] {
                         averaging.average_many(buffers.data(), sizes.data(), buffers.size(), dtype, stream);
                         ++*rounds;
                       });
  XFFL_API_END("xffl_federated_average_many_start")
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
