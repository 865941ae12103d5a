// The begin/end guard around every exported function body: no exception ever crosses into C.
// xffl::Error keeps its status; std::bad_alloc becomes XFFL_ENOMEM; anything else XFFL_EINTERNAL.
//
// XFFL_API_ENTER(handle, name), right after the handle's NULL check, takes the call gate of the state
// behind a state or group handle (state/call_gate.h) until the function returns, on every path: an
// overlapping call on the same state gets XFFL_ESTATE naming the call in progress. Every exported
// function that takes a state or a group enters it, except the ones that cannot overlap harmfully
// or cannot report a status: xffl_group_size/rank/ranks/description (a group's members, index and
// description never change), xffl_is_*_setup (an int, no status), xffl_state_destroy and
// xffl_group_destroy (void; overlapping a destroy is a use after free, which no flag can catch).
// The getters enter with XFFL_API_ENTER_READ instead: they also pass while a nonblocking request holds
// the gate (xffl/request.h), since they only read what no call can change meanwhile.
#ifndef XFFL_SRC_CAPI_GUARD_H
#define XFFL_SRC_CAPI_GUARD_H

#include <new>
#include <string>

#include "common/error.h"
#include "state/call_gate.h"
#include "xffl/types.h"

namespace xffl::capi {

// Records the thread-local message and returns the status.
xffl_status_t set_error(xffl_status_t status, const std::string &message) noexcept;
xffl_status_t set_error(xffl_status_t status, const char *message) noexcept;

// Throws XFFL_EINVAL "<name> is NULL" when pointer is null (the guard prefixes the function's name).
void require_arg(const void *pointer, const char *name);

}  // namespace xffl::capi

#define XFFL_API_BEGIN try {
#define XFFL_API_ENTER(handle, function) \
  const ::xffl::CallGate::Pass xffl_call_pass_ = (handle)->call_gate().enter(function)
#define XFFL_API_ENTER_READ(handle, function) \
  const ::xffl::CallGate::Pass xffl_call_pass_ = (handle)->call_gate().enter_read(function)
#define XFFL_API_END(function)                                                                     \
  }                                                                                                \
  catch (const ::xffl::Error &error) {                                                             \
    return ::xffl::capi::set_error(error.status(), std::string(function) + ": " + error.what());   \
  }                                                                                                \
  catch (const std::bad_alloc &) {                                                                 \
    return ::xffl::capi::set_error(XFFL_ENOMEM, function ": out of memory");                       \
  }                                                                                                \
  catch (const std::exception &error) {                                                            \
    return ::xffl::capi::set_error(XFFL_EINTERNAL, std::string(function) + ": internal error: " + error.what()); \
  }                                                                                                \
  catch (...) {                                                                                    \
    return ::xffl::capi::set_error(XFFL_EINTERNAL, function ": internal error: unknown exception"); \
  }                                                                                                \
  return XFFL_OK;

#endif
