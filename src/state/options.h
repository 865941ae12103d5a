// Options of a state (timeout, strategy, log level, job identity), with defaults from the environment.
#ifndef XFFL_SRC_STATE_OPTIONS_H
#define XFFL_SRC_STATE_OPTIONS_H

#include <optional>
#include <string>

#include "common/environment.h"
#include "xffl/types.h"

namespace xffl {

struct Options {
  int timeout_ms = 300000;
  xffl_federated_strategy_t strategy = XFFL_FEDAVG_HIERARCHICAL;
  xffl_log_level_t log_level = XFFL_LOG_WARN;
  // NONE: crossing groups stay on the main backend; UCX: over UCX with host staging (main NCCL); WAN:
  // over the striped, optionally encrypted TCP transport (main UCX or NCCL).
  xffl_backend_t cross_facility_backend = XFFL_BACKEND_NONE;
  std::string job_id = "xffl";  // every rank of a job must agree; the store checks it
  std::string auth_token;       // shared secret of the rendezvous; empty for none
  // XFFL_OPT_UCX_PROCESS_SETTINGS: whether a UCX backend may change the process for every UCX user in it
  // (UCX_TCP_PUT_ENABLE in the environment, a UCX log handler); off by default.
  bool ucx_process_settings = false;
  bool enqueue_only = false;  // NCCL: return once enqueued instead of waiting on the host (XFFL_ENQUEUE_ONLY)
  // The WAN hop of federated averages (XFFL_OPT_WIRE_FORMAT, XFFL_OPT_ERROR_FEEDBACK; federated/wire/).
  xffl_wire_format_t wire_format = XFFL_WIRE_F32;
  bool error_feedback = false;

  // The wan crossing backend (XFFL_OPT_WAN_STREAMS, XFFL_OPT_WAN_ENCRYPTION; XFFL_WAN_BDP is read from
  // the environment only: the link's bandwidth-delay product in bytes, 0 for the kernel's autotuning).
  int wan_streams = 4;
  xffl_wan_encryption_t wan_encryption = XFFL_WAN_ENCRYPTION_NONE;
  size_t wan_bdp_bytes = 0;
  bool wan_dial_out = false;  // XFFL_WAN_DIAL_OUT (environment only): never listen, dial every peer
  std::string wan_relay;      // XFFL_WAN_RELAY (environment only): "host:port" of the facility's relay

  // Facility faults (XFFL_OPT_FACILITY_FAULTS, XFFL_OPT_FEDERATION_QUORUM): CONTINUE lets the other
  // facilities of a federation of facility jobs go on when one is lost; quorum 0 is a majority.
  xffl_facility_faults_t facility_faults = XFFL_FACILITY_FAULTS_FAIL;
  int federation_quorum = 0;

  // Facility mode (state/facility_link.h): XFFL_FACILITY, XFFL_FEDERATION and XFFL_FEDERATED as
  // written, read from the environment only; xffl_set_global checks them together. All unset: one job
  // is the whole federation.
  std::optional<int> facility;
  std::optional<std::string> federation;
  std::optional<std::string> federated_sizes;

  // The options' variables of bootstrap/env_registry.h (timeout, log level, job id, auth token,
  // cross-facility backend, enqueue-only, UCX process settings, wire format, error feedback, wan streams,
  // encryption and BDP, facility faults and quorum), each else its registry default. A malformed value is XFFL_EINVAL naming the
  // variable. The member defaults above equal the registry's
  // (unit test unit.bootstrap.env_registry).
  static Options from_environment(const Environment &environment);
  // The same over the process environment (common/environment.h).
  static Options from_environment();
  // Integer options; a string option's key is XFFL_EINVAL (use set_string / get_string).
  void set(xffl_option_t option, int value);
  int get(xffl_option_t option) const;
  // String options (XFFL_OPT_AUTH_TOKEN, XFFL_OPT_JOB_ID); an integer option's key is XFFL_EINVAL. The
  // token is write-only: get_string refuses it, and no message ever carries its text.
  void set_string(xffl_option_t option, const std::string &text);
  std::string get_string(xffl_option_t option) const;
  static bool is_string_option(xffl_option_t option);
  // Options xffl_set_global reads once (the rendezvous, the backends it makes): changing one later
  // would not take effect, so it is XFFL_ESTATE then.
  static bool read_by_set_global(xffl_option_t option);
  static const char *name(xffl_option_t option);  // "XFFL_OPT_TIMEOUT_MS", or nullptr when unknown
};

}  // namespace xffl

#endif
