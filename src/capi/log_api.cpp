// xffl_set_log_callback: the host's logger receives the library's log lines (include/xffl/log.h).
#include "capi/guard.h"
#include "common/log.h"
#include "xffl/log.h"

extern "C" {

XFFL_API xffl_status_t xffl_set_log_callback(xffl_log_callback_t callback, void *user_data) {
  XFFL_API_BEGIN
  xffl::set_log_callback(callback, user_data);
  XFFL_API_END("xffl_set_log_callback")
}

}  // extern "C"
