#include "federation/membership_exchange.h"

#include <algorithm>
#include <chrono>

#include "common/error.h"

namespace xffl::federation {

namespace {
using Clock = std::chrono::steady_clock;

// "xffl/wan/addr/5" under "xffl/<job id>/" is "xffl/<job id>/wan/addr/5": the backends' own "xffl/"
// is the prefix's first part already.
std::string under(const std::string &prefix, const std::string &key) {
  return prefix + (key.rfind("xffl/", 0) == 0 ? key.substr(5) : key);
}
}  // namespace

MembershipExchange::MembershipExchange(Endpoint endpoint, std::string secret, int timeout_ms, std::string prefix,
                                       int rank)
    : endpoint_(std::move(endpoint)),
      secret_(std::move(secret)),
      timeout_ms_(timeout_ms),
      prefix_(std::move(prefix)),
      rank_(rank) {}

MembershipStore &MembershipExchange::store() {
  if (!store_) {
    try {
      store_ = connect_membership_store(endpoint_, secret_, timeout_ms_);
    } catch (const Error &error) {
      throw Error(error.status(), "rank " + std::to_string(rank_) + ": connecting to the federation's store " +
                                      endpoint_.text + " (XFFL_FEDERATION): " + error.what());
    }
  }
  return *store_;
}

void MembershipExchange::publish(const std::string &key, const std::vector<uint8_t> &value) {
  auto held = lock();
  store().put(under(prefix_, key), std::string(value.begin(), value.end()));
}

std::vector<uint8_t> MembershipExchange::fetch(const std::string &key, int timeout_ms) {
  auto held = lock();
  const std::string full = under(prefix_, key);
  const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(std::max(timeout_ms, 1));
  MembershipStore &membership = store();
  // A listing of the key as a prefix may hold longer keys too ("addr/1" lists "addr/10"): look for the
  // key itself in it.
  Listing listing = membership.list(full);
  for (;;) {
    for (const KeyValue &entry : listing.entries)
      if (entry.key == full) return std::vector<uint8_t>(entry.value.begin(), entry.value.end());
    const long long left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0)
      fail(XFFL_ETIMEOUT, "rank ", rank_, ": timed out after ", timeout_ms, " ms awaiting '", full,
           "' in the federation's store ", endpoint_.text,
           ": the facility of that rank has not published it (its job is not up, or it runs with another "
           "XFFL_JOB_ID: every facility's job of a federation needs the same)");
    std::optional<Listing> changed = membership.wait_for_change(full, listing, static_cast<int>(std::min<long long>(left, timeout_ms_)));
    if (changed) listing = std::move(*changed);
  }
}

comm::GroupIdentity MembershipExchange::claim_group(const std::vector<int> &sorted_members, uint32_t creation,
                                                    int timeout_ms) {
  (void)creation;
  (void)timeout_ms;
  fail(XFFL_EUNSUPPORTED, "rank ", rank_, ": a process group of ", sorted_members.size(),
       " members spanning facilities has no identity in facility mode (XFFL_FACILITY): only the layout's ",
       "federated groups cross facilities");
}

void MembershipExchange::release_group(uint32_t slot) noexcept { (void)slot; }

}  // namespace xffl::federation
