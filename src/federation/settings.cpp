#include "federation/settings.h"

#include <unistd.h>

#include <algorithm>

#include "bootstrap/env_read.h"
#include "common/error.h"

namespace xffl::federation {

namespace registry = bootstrap::registry;
using registry::Var;

void read_tls_files(const Environment &environment, Endpoint *endpoint) {
  const Var vars[] = {Var::FederationCa, Var::FederationCert, Var::FederationKey};
  std::string *files[] = {&endpoint->tls_files.ca, &endpoint->tls_files.cert, &endpoint->tls_files.key};
  for (size_t i = 0; i < 3; ++i) {
    std::optional<std::string> path = registry::read_text(environment, vars[i]);
    if (!path) continue;
    if (!endpoint->tls)
      fail(XFFL_EINVAL, registry::name(vars[i]), " is set but ", registry::name(Var::Federation), "='",
           endpoint->text, "' does not use TLS: write etcds:// to reach etcd over HTTPS");
    if (::access(path->c_str(), R_OK) != 0)
      fail(XFFL_EINVAL, registry::name(vars[i]), "='", *path, "' is not a file this process can read");
    *files[i] = *path;
  }
  if (endpoint->tls_files.cert.empty() != endpoint->tls_files.key.empty())
    fail(XFFL_EINVAL, registry::name(endpoint->tls_files.cert.empty() ? Var::FederationKey : Var::FederationCert),
         " is set but ", registry::name(endpoint->tls_files.cert.empty() ? Var::FederationCert : Var::FederationKey),
         " is not: a client certificate needs its private key");
}

int64_t default_lease_ttl_seconds(int timeout_ms) {
  const int64_t ttl = std::clamp<int64_t>(timeout_ms / 20 / 1000, 2, 15);
  return std::max<int64_t>(1, std::min<int64_t>(ttl, timeout_ms / 2 / 1000));
}

void check_lease_ttl(int64_t ttl_seconds, int timeout_ms, const char *ttl_origin) {
  if (ttl_seconds * 1000 < int64_t{timeout_ms}) return;
  fail(XFFL_EINVAL, "XFFL_FACILITY_FAULTS=continue needs a lease TTL shorter than the timeout: ",
       registry::name(Var::FederationLeaseTtl), " = ", ttl_seconds, " s (", ttl_origin, ") is not below ",
       registry::name(Var::Timeout), " (XFFL_OPT_TIMEOUT_MS) = ", timeout_ms,
       " ms; survivors would time out before a lost facility's lease ends. Set ",
       registry::name(Var::FederationLeaseTtl), " below ", registry::name(Var::Timeout),
       " (whole seconds, at least 1; the default is ", registry::name(Var::Timeout),
       " / 20 within [2, 15] s, at most half the timeout, at least 1 s)",
       timeout_ms <= 1000 ? ", or a timeout above 1 s" : "");
}

int64_t continue_lease_ttl_seconds(const Environment &environment, int timeout_ms) {
  std::optional<int> ttl_ms = registry::read_int(environment, Var::FederationLeaseTtl);
  if (!ttl_ms) {
    const int64_t ttl = default_lease_ttl_seconds(timeout_ms);
    check_lease_ttl(ttl, timeout_ms, "its default, the smallest a lease can have");
    return ttl;
  }
  const int64_t ttl = std::max<int64_t>(1, (int64_t{*ttl_ms} + 999) / 1000);
  const std::string origin = *ttl_ms == ttl * 1000
                                 ? std::string("as set")
                                 : "set to " + std::to_string(*ttl_ms) + " ms, rounded up to whole seconds";
  check_lease_ttl(ttl, timeout_ms, origin.c_str());
  return ttl;
}

}  // namespace xffl::federation
