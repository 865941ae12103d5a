#include "federation/settings.h"

#include <algorithm>

#include "bootstrap/env_read.h"
#include "common/error.h"

namespace xffl::federation {

namespace registry = bootstrap::registry;
using registry::Var;

int64_t default_lease_ttl_seconds(int timeout_ms) {
  return std::clamp<int64_t>(timeout_ms / 20 / 1000, 2, 15);
}

std::optional<FederationSettings> read_federation_settings(const Environment &environment, int timeout_ms) {
  std::optional<std::string> endpoint = registry::read_text(environment, Var::Federation);
  std::optional<int> facility = registry::read_int(environment, Var::Facility);
  if (!endpoint && !facility) return std::nullopt;
  if (!endpoint || !facility)
    fail(XFFL_EINVAL, registry::name(endpoint ? Var::Federation : Var::Facility), " is set but ",
         registry::name(endpoint ? Var::Facility : Var::Federation),
         " is not: a facility's job needs both, its index and the federation's membership store");
  FederationSettings settings;
  settings.endpoint = parse_endpoint(*endpoint, registry::name(Var::Federation));
  settings.facility = *facility;
  std::optional<int> ttl_ms = registry::read_int(environment, Var::FederationLeaseTtl);
  // etcd's TTLs are whole seconds: round up, so the lease never ends earlier than asked.
  settings.lease_ttl_seconds = ttl_ms ? std::max<int64_t>(1, (int64_t{*ttl_ms} + 999) / 1000)
                                      : default_lease_ttl_seconds(timeout_ms);
  return settings;
}

}  // namespace xffl::federation
