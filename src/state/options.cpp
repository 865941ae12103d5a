#include "state/options.h"

#include "bootstrap/env_read.h"
#include "bootstrap/wire.h"
#include "comm/wan/relay_hello.h"
#include "common/error.h"
#include "federated/wire/wire_format.h"

namespace xffl {

Options Options::from_environment(const Environment &environment) {
  using bootstrap::registry::Var;
  namespace registry = bootstrap::registry;
  // Each variable's type, range and default are the registry's (bootstrap/env_registry.cpp).
  auto value = [&](Var id) { return registry::read_int(environment, id).value_or(registry::default_int(id)); };
  Options options;
  options.timeout_ms = value(Var::Timeout);
  options.log_level = static_cast<xffl_log_level_t>(value(Var::LogLevel));
  options.job_id = registry::read_text(environment, Var::JobId).value_or(registry::default_string(Var::JobId));
  options.auth_token = registry::read_text(environment, Var::AuthToken).value_or("");
  options.cross_facility_backend = static_cast<xffl_backend_t>(value(Var::CrossFacilityBackend));
  options.enqueue_only = value(Var::EnqueueOnly) == 1;
  options.ucx_process_settings = value(Var::UcxProcessSettings) == 1;
  options.wire_format = static_cast<xffl_wire_format_t>(value(Var::WireFormat));
  options.error_feedback = value(Var::ErrorFeedback) == 1;
  options.wan_streams = value(Var::WanStreams);
  if (options.wan_streams > 64)
    fail(XFFL_EINVAL, registry::name(Var::WanStreams), "=", options.wan_streams, " is more than 64 streams");
  options.wan_encryption = static_cast<xffl_wan_encryption_t>(value(Var::WanEncryption));
  options.wan_bdp_bytes = static_cast<size_t>(value(Var::WanBdp));
  options.wan_dial_out = value(Var::WanDialOut) == 1;
  options.wan_relay = registry::read_text(environment, Var::WanRelay).value_or("");
  if (!options.wan_relay.empty()) {
    std::string host, why;
    int port = 0;
    if (!comm::wan::split_host_port(options.wan_relay, false, &host, &port, &why))
      fail(XFFL_EINVAL, registry::name(Var::WanRelay), ": ", why, " (the relay's HOST:PORT)");
  }
  options.facility_faults = static_cast<xffl_facility_faults_t>(value(Var::FacilityFaults));
  options.federation_quorum = value(Var::FederationQuorum);
  options.facility = registry::read_int(environment, Var::Facility);
  options.federation = registry::read_text(environment, Var::Federation);
  options.federated_sizes = registry::read_raw(environment, Var::Federated);
  return options;
}

Options Options::from_environment() {
  std::vector<const char *> names;  // the registry's variables and their fallbacks (XFFL_JOB_ID's)
  for (const bootstrap::registry::Variable &variable : bootstrap::registry::variables()) {
    names.push_back(variable.name);
    names.insert(names.end(), variable.fallbacks.begin(), variable.fallbacks.end());
  }
  return from_environment(process_environment(names));
}

bool Options::is_string_option(xffl_option_t option) {
  return option == XFFL_OPT_AUTH_TOKEN || option == XFFL_OPT_JOB_ID;
}

bool Options::read_by_set_global(xffl_option_t option) {
  return is_string_option(option) || option == XFFL_OPT_CROSS_FACILITY_BACKEND ||
         option == XFFL_OPT_UCX_PROCESS_SETTINGS || option == XFFL_OPT_WAN_STREAMS ||
         option == XFFL_OPT_WAN_ENCRYPTION || option == XFFL_OPT_FACILITY_FAULTS ||
         option == XFFL_OPT_FEDERATION_QUORUM;
}

const char *Options::name(xffl_option_t option) {
  switch (option) {
    case XFFL_OPT_TIMEOUT_MS: return "XFFL_OPT_TIMEOUT_MS";
    case XFFL_OPT_FEDERATED_STRATEGY: return "XFFL_OPT_FEDERATED_STRATEGY";
    case XFFL_OPT_LOG_LEVEL: return "XFFL_OPT_LOG_LEVEL";
    case XFFL_OPT_CROSS_FACILITY_BACKEND: return "XFFL_OPT_CROSS_FACILITY_BACKEND";
    case XFFL_OPT_AUTH_TOKEN: return "XFFL_OPT_AUTH_TOKEN";
    case XFFL_OPT_JOB_ID: return "XFFL_OPT_JOB_ID";
    case XFFL_OPT_UCX_PROCESS_SETTINGS: return "XFFL_OPT_UCX_PROCESS_SETTINGS";
    case XFFL_OPT_ENQUEUE_ONLY: return "XFFL_OPT_ENQUEUE_ONLY";
    case XFFL_OPT_WIRE_FORMAT: return "XFFL_OPT_WIRE_FORMAT";
    case XFFL_OPT_ERROR_FEEDBACK: return "XFFL_OPT_ERROR_FEEDBACK";
    case XFFL_OPT_WAN_STREAMS: return "XFFL_OPT_WAN_STREAMS";
    case XFFL_OPT_WAN_ENCRYPTION: return "XFFL_OPT_WAN_ENCRYPTION";
    case XFFL_OPT_FACILITY_FAULTS: return "XFFL_OPT_FACILITY_FAULTS";
    case XFFL_OPT_FEDERATION_QUORUM: return "XFFL_OPT_FEDERATION_QUORUM";
  }
  return nullptr;
}

void Options::set_string(xffl_option_t option, const std::string &text) {
  switch (option) {
    case XFFL_OPT_AUTH_TOKEN:  // any bytes; empty means no authentication. Never echoed.
      auth_token = text;
      return;
    case XFFL_OPT_JOB_ID:
      if (text.empty()) fail(XFFL_EINVAL, "job id is empty; every rank of a job must give the same non-empty id");
      if (text.size() > bootstrap::wire::kMaxJobId)
        fail(XFFL_EINVAL, "job id of ", text.size(), " bytes exceeds the limit of ", bootstrap::wire::kMaxJobId);
      job_id = text;
      return;
    default: break;
  }
  if (const char *known = name(option))
    fail(XFFL_EINVAL, known, " is an integer option: set it with xffl_set_option");
  fail(XFFL_EINVAL, "unknown option ", static_cast<int>(option));
}

std::string Options::get_string(xffl_option_t option) const {
  switch (option) {
    case XFFL_OPT_AUTH_TOKEN:
      fail(XFFL_EINVAL, "XFFL_OPT_AUTH_TOKEN is write-only: xffl never hands the shared secret back");
    case XFFL_OPT_JOB_ID: return job_id;
    default: break;
  }
  if (const char *known = name(option))
    fail(XFFL_EINVAL, known, " is an integer option: read it with xffl_get_option");
  fail(XFFL_EINVAL, "unknown option ", static_cast<int>(option));
}

void Options::set(xffl_option_t option, int value) {
  if (is_string_option(option)) fail(XFFL_EINVAL, name(option), " is a string option: set it with xffl_set_option_string");
  switch (option) {
    case XFFL_OPT_TIMEOUT_MS:
      if (value < 1) fail(XFFL_EINVAL, "timeout ", value, " ms must be at least 1");
      timeout_ms = value;
      return;
    case XFFL_OPT_FEDERATED_STRATEGY:  // checked by the state against its strategy table first (federated/registry.h)
      strategy = static_cast<xffl_federated_strategy_t>(value);
      return;
    case XFFL_OPT_LOG_LEVEL:
      if (value < XFFL_LOG_ERROR || value > XFFL_LOG_DEBUG)
        fail(XFFL_EINVAL, "log level ", value, " outside [0, 3] (error, warn, info, debug)");
      log_level = static_cast<xffl_log_level_t>(value);
      return;
    case XFFL_OPT_CROSS_FACILITY_BACKEND:
      if (value != XFFL_BACKEND_NONE && value != XFFL_BACKEND_UCX && value != XFFL_BACKEND_WAN)
        fail(XFFL_EINVAL, "cross-facility backend ", value, " is not XFFL_BACKEND_NONE (0, the backend of ",
             "xffl_set_global), XFFL_BACKEND_UCX (1) or XFFL_BACKEND_WAN (3)");
      cross_facility_backend = static_cast<xffl_backend_t>(value);
      return;
    case XFFL_OPT_UCX_PROCESS_SETTINGS:
      if (value != 0 && value != 1) fail(XFFL_EINVAL, "UCX process settings ", value, " is not 0 (off) or 1 (on)");
      ucx_process_settings = value == 1;
      return;
    case XFFL_OPT_ENQUEUE_ONLY:
      if (value != 0 && value != 1) fail(XFFL_EINVAL, "enqueue-only ", value, " is not 0 (wait on the host) or 1");
      enqueue_only = value == 1;
      return;
    case XFFL_OPT_WIRE_FORMAT:
      if (!federated::wire::valid_format(value))
        fail(XFFL_EINVAL, "wire format ", value, " outside [0, 4] (f32, bf16, f16, int8_block, int4_block)");
      wire_format = static_cast<xffl_wire_format_t>(value);
      return;
    case XFFL_OPT_ERROR_FEEDBACK:
      if (value != 0 && value != 1) fail(XFFL_EINVAL, "error feedback ", value, " is not 0 (off) or 1 (on)");
      error_feedback = value == 1;
      return;
    case XFFL_OPT_WAN_STREAMS:
      if (value < 1 || value > 64) fail(XFFL_EINVAL, "wan streams ", value, " outside [1, 64]");
      wan_streams = value;
      return;
    case XFFL_OPT_WAN_ENCRYPTION:
      if (value < XFFL_WAN_ENCRYPTION_NONE || value > XFFL_WAN_ENCRYPTION_CHACHA20_POLY1305)
        fail(XFFL_EINVAL, "wan encryption ", value, " is not XFFL_WAN_ENCRYPTION_NONE (0), _AES_256_GCM (1) or ",
             "_CHACHA20_POLY1305 (2)");
      wan_encryption = static_cast<xffl_wan_encryption_t>(value);
      return;
    case XFFL_OPT_FACILITY_FAULTS:
      if (value != XFFL_FACILITY_FAULTS_FAIL && value != XFFL_FACILITY_FAULTS_CONTINUE)
        fail(XFFL_EINVAL, "facility faults ", value, " is not XFFL_FACILITY_FAULTS_FAIL (0) or _CONTINUE (1)");
      facility_faults = static_cast<xffl_facility_faults_t>(value);
      return;
    case XFFL_OPT_FEDERATION_QUORUM:  // its upper bound, the number of facilities, is checked with the layout
      if (value < 0) fail(XFFL_EINVAL, "federation quorum ", value, " is negative (0 means a majority)");
      federation_quorum = value;
      return;
    default: break;
  }
  fail(XFFL_EINVAL, "unknown option ", static_cast<int>(option));
}

int Options::get(xffl_option_t option) const {
  if (is_string_option(option)) fail(XFFL_EINVAL, name(option), " is a string option: read it with xffl_get_option_string");
  switch (option) {
    case XFFL_OPT_TIMEOUT_MS: return timeout_ms;
    case XFFL_OPT_FEDERATED_STRATEGY: return strategy;
    case XFFL_OPT_LOG_LEVEL: return log_level;
    case XFFL_OPT_CROSS_FACILITY_BACKEND: return cross_facility_backend;
    case XFFL_OPT_UCX_PROCESS_SETTINGS: return ucx_process_settings ? 1 : 0;
    case XFFL_OPT_ENQUEUE_ONLY: return enqueue_only ? 1 : 0;
    case XFFL_OPT_WIRE_FORMAT: return wire_format;
    case XFFL_OPT_ERROR_FEEDBACK: return error_feedback ? 1 : 0;
    case XFFL_OPT_WAN_STREAMS: return wan_streams;
    case XFFL_OPT_WAN_ENCRYPTION: return wan_encryption;
    case XFFL_OPT_FACILITY_FAULTS: return facility_faults;
    case XFFL_OPT_FEDERATION_QUORUM: return federation_quorum;
    default: break;
  }
  fail(XFFL_EINVAL, "unknown option ", static_cast<int>(option));
}

}  // namespace xffl
