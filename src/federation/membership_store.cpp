#include "federation/membership_store.h"

#include "common/error.h"
#include "federation/etcd_store.h"
#include "federation/xffl_store.h"

namespace xffl::federation {

std::unique_ptr<MembershipStore> connect_membership_store(const Endpoint &endpoint, const std::string &secret,
                                                          int timeout_ms) {
  if (timeout_ms <= 0) fail(XFFL_EINVAL, "federation ", endpoint.text, ": timeout ", timeout_ms, " ms must be positive");
  if (endpoint.kind == Endpoint::Kind::Etcd) return std::make_unique<EtcdStore>(endpoint, secret, timeout_ms);
  return std::make_unique<XfflStore>(endpoint, secret, timeout_ms);
}

void check_key(const std::string &endpoint, const std::string &key) {
  if (key.empty()) fail(XFFL_EINVAL, "federation ", endpoint, ": empty key");
  if (key.size() > kMaxKey)
    fail(XFFL_EINVAL, "federation ", endpoint, ": key of ", key.size(), " bytes is longer than ", kMaxKey);
}

void check_value(const std::string &endpoint, const std::string &key, const std::string &value) {
  if (value.size() > kMaxValue)
    fail(XFFL_EINVAL, "federation ", endpoint, ": value of ", key, " has ", value.size(), " bytes, more than ",
         kMaxValue);
}

void check_ttl(const std::string &endpoint, int64_t ttl_seconds) {
  if (ttl_seconds < 1 || ttl_seconds > kMaxLeaseTtlSeconds)
    fail(XFFL_EINVAL, "federation ", endpoint, ": lease TTL ", ttl_seconds, " s outside [1, ", kMaxLeaseTtlSeconds,
         "]");
}

}  // namespace xffl::federation
