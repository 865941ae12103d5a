// extern "C" shims of xffl/request.h. A request takes no state gate: it holds its state's gate itself
// until it is seen done (state/request.h).
#include <string>

#include "capi/guard.h"
#include "state/request.h"
#include "xffl/request.h"

using xffl::capi::require_arg;

namespace {

// The request's result, as the blocking call would have returned it, its message prefixed with the call
// that started it.
xffl_status_t result(const xffl::Request &request, const char *function) {
  if (request.status() == XFFL_OK) return XFFL_OK;
  return xffl::capi::set_error(request.status(),
                               std::string(function) + ": " + request.call() + ": " + request.message());
}

}  // namespace

extern "C" {

XFFL_API xffl_status_t xffl_request_test(xffl_request_t *req, int *done) {
  XFFL_API_BEGIN
  require_arg(req, "req");
  require_arg(done, "done");
  if (!req->request->test()) {
    *done = 0;
    return XFFL_OK;
  }
  *done = 1;
  return result(*req->request, "xffl_request_test");
  XFFL_API_END("xffl_request_test")
}

XFFL_API xffl_status_t xffl_request_wait(xffl_request_t *req) {
  XFFL_API_BEGIN
  require_arg(req, "req");
  req->request->wait();
  return result(*req->request, "xffl_request_wait");
  XFFL_API_END("xffl_request_wait")
}

XFFL_API void xffl_request_free(xffl_request_t *req) {
  try {
    delete req;  // an unfinished request is waited for first (~Request)
  } catch (...) {  // free never fails and never throws into C
  }
}

}  // extern "C"
