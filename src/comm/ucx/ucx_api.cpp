#include "comm/ucx/ucx_api.h"

#include <signal.h>

#include <cstdlib>
#include <string>

#include "common/environment.h"
#include "common/error.h"
#include "common/lazy_library.h"

namespace xffl::comm::ucx {

namespace {

// What libucs's constructor changes that belongs to the host (ucx_api.h): the error signals' handlers
// with this thread's alternate signal stack, and the debug signal's handler. Saved at construction,
// put back by restore(); whatever the user asked UCX to own (UCX_ERROR_SIGNALS, UCX_DEBUG_SIGNO set in
// the environment, even to an empty value) is left to UCX.
class HostSignals {
 public:
  HostSignals()
      : keep_error_signals_(!process_environment_has("UCX_ERROR_SIGNALS")),
        keep_debug_signal_(!process_environment_has("UCX_DEBUG_SIGNO")) {
    if (keep_error_signals_) {
      for (size_t i = 0; i < kErrorSignals; ++i) sigaction(kErrorSignal[i], nullptr, &error_actions_[i]);
      has_stack_ = sigaltstack(nullptr, &stack_) == 0;
    }
    if (keep_debug_signal_) sigaction(SIGHUP, nullptr, &debug_action_);
  }

  void restore() const {
    if (keep_error_signals_) {
      for (size_t i = 0; i < kErrorSignals; ++i) sigaction(kErrorSignal[i], &error_actions_[i], nullptr);
      // UCX's stack replaced ours on this thread (or gave it one where it had none, SS_DISABLE).
      if (has_stack_) {
        stack_t previous = stack_;
        previous.ss_flags &= SS_DISABLE;  // SS_ONSTACK is a report, not a request
        sigaltstack(&previous, nullptr);
      }
    }
    if (keep_debug_signal_) sigaction(SIGHUP, &debug_action_, nullptr);
  }

 private:
  static constexpr size_t kErrorSignals = 4;
  static constexpr int kErrorSignal[kErrorSignals] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE};
  bool keep_error_signals_;
  bool keep_debug_signal_;
  struct sigaction error_actions_[kErrorSignals] = {};
  struct sigaction debug_action_ = {};
  bool has_stack_ = false;
  stack_t stack_ = {};
};

UcxApi open_installed_ucx() { return open_ucx(kUcxLibrary); }

}  // namespace

UcxApi open_ucx(const char *library) {
  void *handle = nullptr;
  std::string reason;
  {
    const HostSignals host;
    // RTLD_NOW: a UCX missing a symbol it needs fails here, not in the middle of a collective.
    handle = open_library({library}, reason);
    host.restore();
  }
  if (!handle)
    fail(XFFL_EUNSUPPORTED, "backend ucx: UCX could not be loaded (", reason,
         "); install UCX 1.13 or later (Debian: libucx0) where the dynamic loader finds ", library);
  // Never closed, also after a failure below: UCX's constructor has run and its threads may exist.
  const SymbolResolver resolve(handle, [library](const char *name, const std::string &why) {
    fail(XFFL_EUNSUPPORTED, "backend ucx: UCX loaded from ", library, " lacks ", name, " (", why,
         "); xffl needs UCX 1.13 or later");
  });
  UcxApi api{};
#define XFFL_RESOLVE(name) XFFL_RESOLVE_SYMBOL(resolve, api, name)
  XFFL_RESOLVE(ucp_config_read);
  XFFL_RESOLVE(ucp_config_release);
  XFFL_RESOLVE(ucp_config_modify);
  XFFL_RESOLVE(ucp_init_version);
  XFFL_RESOLVE(ucp_cleanup);
  XFFL_RESOLVE(ucp_worker_create);
  XFFL_RESOLVE(ucp_worker_destroy);
  XFFL_RESOLVE(ucp_worker_get_efd);
  XFFL_RESOLVE(ucp_worker_get_address);
  XFFL_RESOLVE(ucp_worker_release_address);
  XFFL_RESOLVE(ucp_worker_progress);
  XFFL_RESOLVE(ucp_worker_arm);
  XFFL_RESOLVE(ucp_ep_create);
  XFFL_RESOLVE(ucp_ep_close_nbx);
  XFFL_RESOLVE(ucp_ep_print_info);
  XFFL_RESOLVE(ucp_tag_send_nbx);
  XFFL_RESOLVE(ucp_tag_recv_nbx);
  XFFL_RESOLVE(ucp_tag_recv_request_test);
  XFFL_RESOLVE(ucp_tag_probe_nb);
  XFFL_RESOLVE(ucp_tag_msg_recv_nbx);
  XFFL_RESOLVE(ucp_request_check_status);
  XFFL_RESOLVE(ucp_request_cancel);
  XFFL_RESOLVE(ucp_request_free);
  XFFL_RESOLVE(ucs_status_string);
  XFFL_RESOLVE(ucs_log_push_handler);
  XFFL_RESOLVE(ucs_log_pop_handler);
  XFFL_RESOLVE(ucs_log_num_handlers);
#undef XFFL_RESOLVE
  return api;
}

// The table is trivially destructible: it stays readable until the process ends (ucx_log_filter.h
// pops its handler from a static destructor).
const UcxApi &ucx() { return load_once<UcxApi, open_installed_ucx>(); }

}  // namespace xffl::comm::ucx
