#include "federation/membership_store.h"

#include "common/error.h"

namespace xffl::federation {

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
