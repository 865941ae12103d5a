// comm::Exchange over the federation's membership store: how the crossing backend (wan) of a facility
// job publishes and finds the addresses of the senders in other facilities, whose job stores it cannot
// see (state/facility_link.h). Every key is written under a prefix of the federation ("xffl/<job id>/"),
// so that two federations on one store never mix; "xffl/wan/addr/5" becomes "xffl/<job id>/wan/addr/5"
// (a key's own leading "xffl/" is dropped).
//
// The connection is made on the first call, not before: a rank whose groups never cross facilities
// never reaches the store. Calls are serialised (one connection, one call at a time).
//
// Group identities: the groups that cross facilities are the layout's FEDERATED family, whose tags
// come from the layout on every rank alike (no claim); a process group spanning facilities is refused
// before it would need one, so claim_group is XFFL_EUNSUPPORTED here. departed_ranks knows of none (a
// facility's liveness is its lease, kept by the federation's coordinator, not this exchange).
#ifndef XFFL_SRC_FEDERATION_MEMBERSHIP_EXCHANGE_H
#define XFFL_SRC_FEDERATION_MEMBERSHIP_EXCHANGE_H

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "comm/exchange.h"
#include "federation/membership_store.h"

namespace xffl::federation {

class MembershipExchange final : public comm::Exchange {
 public:
  // prefix: "xffl/<job id>/"; rank: this process's global rank, for messages; timeout_ms bounds the
  // connection and each store call (fetch waits up to its own timeout, in calls of at most this).
  MembershipExchange(Endpoint endpoint, std::string secret, int timeout_ms, std::string prefix, int rank);

  void publish(const std::string &key, const std::vector<uint8_t> &value) override;
  // Polls the store (wait_for_change) until the key exists. XFFL_ETIMEOUT names the key, the endpoint
  // and the likely causes (the facility holding that rank is not up, or its job has another job id).
  std::vector<uint8_t> fetch(const std::string &key, int timeout_ms) override;
  comm::GroupIdentity claim_group(const std::vector<int> &sorted_members, uint32_t creation, int timeout_ms) override;
  void release_group(uint32_t slot) noexcept override;

  // The store, connected on first use (XFFL_ENETWORK, XFFL_ETIMEOUT, XFFL_EAUTH as
  // connect_membership_store throws them). Callers outside this class hold lock() while they use it.
  MembershipStore &store();
  std::unique_lock<std::mutex> lock() { return std::unique_lock<std::mutex>(mutex_); }
  const std::string &prefix() const { return prefix_; }
  const Endpoint &endpoint() const { return endpoint_; }

 private:
  Endpoint endpoint_;
  std::string secret_;
  int timeout_ms_;
  std::string prefix_;
  int rank_;
  std::mutex mutex_;
  std::unique_ptr<MembershipStore> store_;
};

}  // namespace xffl::federation

#endif
