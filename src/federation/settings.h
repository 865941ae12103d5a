// A facility job's federation settings from its environment: XFFL_FEDERATION (parsed, endpoint.h),
// XFFL_FACILITY, XFFL_FEDERATION_LEASE_TTL, and the TLS files of an etcds:// endpoint
// (bootstrap/env_registry.h declares them).
#ifndef XFFL_SRC_FEDERATION_SETTINGS_H
#define XFFL_SRC_FEDERATION_SETTINGS_H

#include <cstdint>
#include <optional>

#include "common/environment.h"
#include "federation/endpoint.h"

namespace xffl::federation {

struct FederationSettings {
  Endpoint endpoint;
  int facility = 0;
  int64_t lease_ttl_seconds = 0;
};

// XFFL_TIMEOUT / 20, within [2, 15] s: a lost facility is noticed well inside one timeout, and a
// facility is not declared lost over a short stall (torchft's heartbeat timeout is 5 s).
int64_t default_lease_ttl_seconds(int timeout_ms);

// nullopt when neither XFFL_FEDERATION nor XFFL_FACILITY is set (the single-world mode). Throws
// xffl::Error(XFFL_EINVAL) naming the variables: one set without the other, an endpoint that does not
// parse, a facility or TTL that does not fit its type.
std::optional<FederationSettings> read_federation_settings(const Environment &environment, int timeout_ms);

}  // namespace xffl::federation

#endif
