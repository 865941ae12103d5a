#include <cstring>

#include "capi/guard.h"
#include "xffl/status.h"
#include "xffl/version.h"

namespace xffl::capi {

namespace {
thread_local char last_message[1024] = "";
}

xffl_status_t set_error(xffl_status_t status, const char *message) noexcept {
  std::strncpy(last_message, message, sizeof last_message - 1);
  last_message[sizeof last_message - 1] = '\0';
  return status;
}

xffl_status_t set_error(xffl_status_t status, const std::string &message) noexcept {
  return set_error(status, message.c_str());
}

void require_arg(const void *pointer, const char *name) {
  if (!pointer) throw Error(XFFL_EINVAL, std::string(name) + " is NULL");
}

}  // namespace xffl::capi

extern "C" {

XFFL_API const char *xffl_status_string(xffl_status_t status) {
  switch (status) {
    case XFFL_OK: return "XFFL_OK: success";
    case XFFL_EINVAL: return "XFFL_EINVAL: invalid argument";
    case XFFL_ESTATE: return "XFFL_ESTATE: call out of order for the state";
    case XFFL_ENOTSET: return "XFFL_ENOTSET: field not set";
    case XFFL_ENOMEM: return "XFFL_ENOMEM: out of memory";
    case XFFL_EUNSUPPORTED: return "XFFL_EUNSUPPORTED: not supported";
    case XFFL_ETIMEOUT: return "XFFL_ETIMEOUT: timed out";
    case XFFL_EPEER: return "XFFL_EPEER: a peer failed";
    case XFFL_EAUTH: return "XFFL_EAUTH: authentication failed";
    case XFFL_ENETWORK: return "XFFL_ENETWORK: network error";
    case XFFL_EBACKEND: return "XFFL_EBACKEND: backend error";
    case XFFL_EBUFSIZE: return "XFFL_EBUFSIZE: buffer too small";
    case XFFL_EINTERNAL: return "XFFL_EINTERNAL: internal error";
    case XFFL_EQUORUM: return "XFFL_EQUORUM: the federation is below its quorum";
  }
  return "XFFL_UNKNOWN: unknown status";
}

XFFL_API const char *xffl_last_error_message(void) { return xffl::capi::last_message; }

XFFL_API void xffl_version(int *major, int *minor, int *patch) {
  if (major) *major = XFFL_VERSION_MAJOR;
  if (minor) *minor = XFFL_VERSION_MINOR;
  if (patch) *patch = XFFL_VERSION_PATCH;
}

#define XFFL_STRINGIFY2(x) #x
#define XFFL_STRINGIFY(x) XFFL_STRINGIFY2(x)
XFFL_API const char *xffl_version_string(void) {
  return XFFL_STRINGIFY(XFFL_VERSION_MAJOR) "." XFFL_STRINGIFY(XFFL_VERSION_MINOR) "." XFFL_STRINGIFY(XFFL_VERSION_PATCH);
}

}  // extern "C"
