// A facility job's federation settings that only its environment gives (bootstrap/env_registry.h
// declares them): the TLS files of an etcds:// endpoint, and XFFL_FEDERATION_LEASE_TTL. XFFL_FEDERATION
// and XFFL_FACILITY are options too (state/facility_link.h reads them).
#ifndef XFFL_SRC_FEDERATION_SETTINGS_H
#define XFFL_SRC_FEDERATION_SETTINGS_H

#include <cstdint>

#include "common/environment.h"
#include "federation/endpoint.h"

namespace xffl::federation {

// XFFL_FEDERATION_CA, _CERT and _KEY into endpoint->tls_files. Throws xffl::Error(XFFL_EINVAL) naming the
// variable: one set for an endpoint without TLS (etcd:// rather than etcds://), a certificate without its
// key or a key without its certificate, a file this process cannot read (checked now, so that a typo
// shows before any rank waits).
void read_tls_files(const Environment &environment, Endpoint *endpoint);

// XFFL_TIMEOUT / 20, within [2, 15] s: a lost facility is noticed well inside one timeout, and a
// facility is not declared lost over a short stall (torchft's heartbeat timeout is 5 s). At most half
// the timeout (whole seconds, at least 1): a timeout under 4 s gets 1 s, so that a lease still ends
// inside the timeout (below 2 s nothing does: see continue_lease_ttl_seconds).
int64_t default_lease_ttl_seconds(int timeout_ms);

// The lease TTL of a facility job under XFFL_FACILITY_FAULTS=continue: XFFL_FEDERATION_LEASE_TTL (whole
// seconds, rounded up), else the default above, checked against the timeout. The TTL must be shorter than
// the timeout: the survivors of a lost facility learn of the loss when its lease ends, at most one TTL
// after the loss, and each of their waits ends after one timeout; with TTL >= timeout they time out
// first and the whole federation fails instead of going on. Throws XFFL_EINVAL naming both values and
// both variables. Equal is refused too: a survivor's wait that began just before the
// loss would end together with the lease, before anyone read its end.
int64_t continue_lease_ttl_seconds(const Environment &environment, int timeout_ms);
// The same check for a TTL already fixed, against a new timeout (XFFL_OPT_TIMEOUT_MS set later).
void check_lease_ttl(int64_t ttl_seconds, int timeout_ms, const char *ttl_origin);

}  // namespace xffl::federation

#endif
