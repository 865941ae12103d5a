// A filter in front of UCX's own log handler, for two kinds of lines:
//
// 1. A peer on this host dies while CMA reads (or writes) its memory. On an endpoint without error
//    handling (UCP_ERR_HANDLING_MODE_NONE, which same-host endpoints use to get shared memory and
//    CMA, see endpoint_cache.cpp) UCX 1.13 logs "process_vm_readv(...) returned -1: No such process" at
//    FATAL level from cma_ep.c, and its default handler then aborts the process. The transport has
//    already failed the operation (uct_cma_ep_tx returns UCS_ERR_IO_ERROR, which completes the
//    request with that status; see openucx src/uct/sm/scopy/cma/cma_ep.c, uct_cma_ep_tx_error): only
//    the log line kills us. The filter stops that line and keeps it for the thread that was
//    progressing the worker (take_transport_failure), so the collective fails with XFFL_EPEER naming
//    the peer in UCX's words. No other FATAL line is touched: assertions and ucs_fatal() do not go
//    through log handlers, and every other FATAL line still aborts as UCX intends.
//
// 2. Lines we report ourselves. While a RedirectUcxLines is in scope on a thread, UCX's ERROR and
//    WARN lines from that thread go to its sink instead of stderr:
//    - making an endpoint: a peer that died leaves UCX saying "shmat(...) failed: Invalid argument";
//      the endpoint's error (XFFL_EPEER) carries those words instead.
//    - teardown, to xffl's log at debug level. Endpoints to peers known to be gone are force-closed
//      and the others flushed first (ucx_worker.cpp), so UCX has nothing to say at a normal end;
//      what is left is a peer exiting during our final flush ("error during flush: Endpoint
//      timeout"): it finished its part, and nothing in the line is for the user to act on.
//
// Measured (64 MiB f32 allreduce, 2 ranks on this 2-core VM, xffl-bench -n 10 -w 2 busbw, runs
// side by side): CMA behind this filter 4.4-4.95 GB/s, the same as before it (4.8-4.95); UCX_TLS=^cma
// 2.3-2.9 GB/s (UCX then moves rendezvous data over TCP loopback); TCP only 2.8-2.9. Under load
// earlier the same ratio: 1.3-1.4 against 0.72-0.75 (^cma) and 0.38-0.49 (mode PEER on the host,
// which in UCX 1.13 means TCP, or shared memory without CMA with UCX_{SYSV,POSIX}_ERROR_HANDLING=y).
// Not taken: UCX_TLS=sysv,self reached 5.6-5.8 GB/s (rendezvous over shared-memory active
// messages), but UCX's transport list is per context and would cut off other hosts.
//
// UCX keeps one list of log handlers for the whole process, which another UCX user of the process (an
// MPI library) shares: the handler is installed only when the user asks for it with
// XFFL_OPT_UCX_PROCESS_SETTINGS (or XFFL_UCX_PROCESS_SETTINGS=1; xffl-run sets it for its children).
// Without it, UCX's own handler prints every line, and a peer on this host dying during a CMA transfer
// aborts the survivor as UCX intends. Once installed, the handler stays until the library is unloaded
// (it is popped then only if it is still the last one pushed). Header-only (inline) so that comm/ucx
// needs no new translation unit in src/comm_ucx.cmake.
#ifndef XFFL_SRC_COMM_UCX_UCX_LOG_FILTER_H
#define XFFL_SRC_COMM_UCX_UCX_LOG_FILTER_H

#include <ucs/config/types.h>
#include <ucs/debug/log_def.h>

#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <functional>
#include <mutex>
#include <string>

#include "comm/ucx/ucx_api.h"

namespace xffl::comm::ucx {

// level: "ERROR" or "WARN"; where: "file:line"; text: UCX's message.
using UcxLogSink = std::function<void(const char *level, const std::string &where, const std::string &text)>;

namespace log_filter_detail {

inline thread_local std::string last_transport_failure;
inline thread_local const UcxLogSink *redirect_sink = nullptr;

inline bool file_is(const char *file, const char *name) {
  if (!file) return false;
  const size_t file_length = std::strlen(file), name_length = std::strlen(name);
  if (file_length < name_length || std::strcmp(file + file_length - name_length, name) != 0) return false;
  return file_length == name_length || file[file_length - name_length - 1] == '/';
}

inline std::string format_line(const char *format, va_list ap) {
  char text[1024];
  va_list copy;
  va_copy(copy, ap);
  const int length = std::vsnprintf(text, sizeof text, format, copy);
  va_end(copy);
  return length < 0 ? std::string(format) : std::string(text);
}

inline ucs_log_func_rc_t filter(const char *file, unsigned line, const char *, ucs_log_level_t level,
                                const ucs_log_component_config_t *, const char *format, va_list ap) {
  if (level == UCS_LOG_LEVEL_FATAL && file_is(file, "cma_ep.c")) {
    last_transport_failure = format_line(format, ap);
    return UCS_LOG_FUNC_RC_STOP;
  }
  if (redirect_sink && (level == UCS_LOG_LEVEL_ERROR || level == UCS_LOG_LEVEL_WARN)) {
    (*redirect_sink)(level == UCS_LOG_LEVEL_ERROR ? "ERROR" : "WARN",
                     std::string(file ? file : "?") + ":" + std::to_string(line), format_line(format, ap));
    return UCS_LOG_FUNC_RC_STOP;
  }
  return UCS_LOG_FUNC_RC_CONTINUE;
}

struct Installation {
  std::once_flag once;
  unsigned handlers_after_push = 0;
  ~Installation() {
    if (handlers_after_push != 0 && ucx().ucs_log_num_handlers() == handlers_after_push) ucx().ucs_log_pop_handler();
  }
};

inline Installation installation;

}  // namespace log_filter_detail

inline void install_ucx_log_filter() {
  auto &installed = log_filter_detail::installation;
  std::call_once(installed.once, [&] {
    ucx().ucs_log_push_handler(&log_filter_detail::filter);
    installed.handlers_after_push = ucx().ucs_log_num_handlers();
  });
}

// The last CMA failure the filter stopped on this thread ("" if none), and forgets it.
inline std::string take_transport_failure() {
  std::string failure;
  failure.swap(log_filter_detail::last_transport_failure);
  return failure;
}

// While in scope, this thread's UCX ERROR and WARN lines go to sink (nested scopes: the innermost).
class RedirectUcxLines {
 public:
  explicit RedirectUcxLines(UcxLogSink sink) : sink_(std::move(sink)), previous_(log_filter_detail::redirect_sink) {
    log_filter_detail::redirect_sink = &sink_;
  }
  ~RedirectUcxLines() { log_filter_detail::redirect_sink = previous_; }
  RedirectUcxLines(const RedirectUcxLines &) = delete;
  RedirectUcxLines &operator=(const RedirectUcxLines &) = delete;

 private:
  UcxLogSink sink_;
  const UcxLogSink *previous_;
};

}  // namespace xffl::comm::ucx

#endif
