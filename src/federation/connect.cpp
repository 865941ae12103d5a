// The one place that knows both implementations: the endpoint's scheme chooses.
#include "common/error.h"
#include "federation/etcd_store.h"
#include "federation/membership_store.h"
#include "federation/xffl_store.h"

namespace xffl::federation {

std::unique_ptr<MembershipStore> connect_membership_store(const Endpoint &endpoint, const std::string &secret,
                                                          int timeout_ms) {
  if (timeout_ms <= 0) fail(XFFL_EINVAL, "federation ", endpoint.text, ": timeout ", timeout_ms, " ms must be positive");
  if (endpoint.kind == Endpoint::Kind::Etcd) return std::make_unique<EtcdStore>(endpoint, secret, timeout_ms);
  return std::make_unique<XfflStore>(endpoint, secret, timeout_ms);
}

}  // namespace xffl::federation
