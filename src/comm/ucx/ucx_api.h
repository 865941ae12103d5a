// UCX, loaded at run time the first time a UCX backend is made, and the one table of UCX functions that
// xffl calls (every ucp_/ucs_ call of comm/ucx goes through ucx()).
//
// libxffl is compiled against UCX's headers but does not link UCX, because loading UCX changes the
// whole process (UCX 1.13): libucs's constructor (ucs/sys/init.c ucs_init -> ucs/debug/debug.c
// ucs_debug_init) installs UCX's handlers for SIGSEGV, SIGBUS, SIGILL and SIGFPE (UCX_ERROR_SIGNALS)
// with an alternate signal stack on the loading thread, and one for SIGHUP (UCX_DEBUG_SIGNO); libucm
// patches the process's memory functions once a context asks for memory events. A program that never
// chooses UCX (backend NONE, or NCCL without the UCX crossing) keeps all of its own: a multithreaded
// Julia process whose SIGSEGV handler UCX replaced crashes at its first GC safepoint (MPI.jl's issue
// #337), and ThreadSanitizer builds crash in libucm's madvise hook.
//
// When xffl loads UCX it saves those handlers and the thread's alternate stack before dlopen and puts
// them back right after it (UCX installs nothing more at ucp_init), unless the user asked for UCX's:
// UCX_ERROR_SIGNALS set in the environment keeps UCX's error handlers and stack, UCX_DEBUG_SIGNO its
// debug signal. A UCX loaded before (an MPI library linked it) is used as it is: dlopen then runs no
// constructor, and the restore puts back what was there.
//
// Loaded once per process (std::call_once), RTLD_LOCAL (no UCX symbol becomes visible to the host's
// lookups; UCX finds its transport modules, e.g. ucx/libuct_cma.so, next to its own libucs), and never
// unloaded: UCX keeps an async thread and memory hooks that outlive every context. A failed load is
// remembered and reported to every later caller in the same words.
#ifndef XFFL_SRC_COMM_UCX_UCX_API_H
#define XFFL_SRC_COMM_UCX_UCX_API_H

#include <ucp/api/ucp.h>
#include <ucs/debug/log_def.h>

namespace xffl::comm::ucx {

// The functions, by their UCX names, typed from UCX's own declarations. ucp_init is a static inline
// wrapper in ucp.h: call ucp_init_version(UCP_API_MAJOR, UCP_API_MINOR, ...) as it does.
struct UcxApi {
  decltype(&::ucp_config_read) ucp_config_read;
  decltype(&::ucp_config_release) ucp_config_release;
  decltype(&::ucp_config_modify) ucp_config_modify;
  decltype(&::ucp_init_version) ucp_init_version;
  decltype(&::ucp_cleanup) ucp_cleanup;
  decltype(&::ucp_worker_create) ucp_worker_create;
  decltype(&::ucp_worker_destroy) ucp_worker_destroy;
  decltype(&::ucp_worker_get_efd) ucp_worker_get_efd;
  decltype(&::ucp_worker_get_address) ucp_worker_get_address;
  decltype(&::ucp_worker_release_address) ucp_worker_release_address;
  decltype(&::ucp_worker_progress) ucp_worker_progress;
  decltype(&::ucp_worker_arm) ucp_worker_arm;
  decltype(&::ucp_ep_create) ucp_ep_create;
  decltype(&::ucp_ep_close_nbx) ucp_ep_close_nbx;
  decltype(&::ucp_ep_print_info) ucp_ep_print_info;
  decltype(&::ucp_tag_send_nbx) ucp_tag_send_nbx;
  decltype(&::ucp_tag_recv_nbx) ucp_tag_recv_nbx;
  decltype(&::ucp_tag_recv_request_test) ucp_tag_recv_request_test;
  decltype(&::ucp_tag_probe_nb) ucp_tag_probe_nb;
  decltype(&::ucp_tag_msg_recv_nbx) ucp_tag_msg_recv_nbx;
  decltype(&::ucp_request_check_status) ucp_request_check_status;
  decltype(&::ucp_request_cancel) ucp_request_cancel;
  decltype(&::ucp_request_free) ucp_request_free;
  decltype(&::ucs_status_string) ucs_status_string;
  decltype(&::ucs_log_push_handler) ucs_log_push_handler;
  decltype(&::ucs_log_pop_handler) ucs_log_pop_handler;
  decltype(&::ucs_log_num_handlers) ucs_log_num_handlers;
};

// The soname xffl loads: UCX's ABI major version 0.
inline constexpr const char *kUcxLibrary = "libucp.so.0";

// UCX, loaded on the first call as described above. Throws xffl::Error XFFL_EUNSUPPORTED when UCX
// cannot be loaded or lacks a function, with dlerror()'s words; the same error on every later call.
const UcxApi &ucx();

// Loads `library` (with the signal handling above) and resolves the table from it. ucx() calls it once
// with kUcxLibrary; tests call it with names that fail. Throws like ucx().
UcxApi open_ucx(const char *library);

}  // namespace xffl::comm::ucx

#endif
