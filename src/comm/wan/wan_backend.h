// XFFL_BACKEND_WAN: the transport of the groups that cross facilities (XFFL_OPT_CROSS_FACILITY_BACKEND
// = XFFL_BACKEND_WAN under a UCX or NCCL main backend): host memory over plain TCP between the members
// of a crossing group, striped over XFFL_OPT_WAN_STREAMS connections per pair and optionally encrypted
// (XFFL_OPT_WAN_ENCRYPTION). Every connection is authenticated with the job's secret (wan_hub.h).
// Only a crossing backend: as the main backend, set_global refuses it (XFFL_EUNSUPPORTED).
//
// Lifetime: the communicators share the hub (the listener) and may outlive the backend.
// Not thread-safe: one thread drives a backend and its communicators.
#ifndef XFFL_SRC_COMM_WAN_WAN_BACKEND_H
#define XFFL_SRC_COMM_WAN_WAN_BACKEND_H

#include <memory>

#include "comm/backend_table.h"
#include "comm/communicator.h"
#include "comm/wan/wan_hub.h"

namespace xffl::comm {

class WanBackend final : public Backend {
 public:
  // Listens and publishes this rank's address. Throws xffl::Error: XFFL_EINVAL for bad settings (streams
  // outside [1, 64], an unknown encryption, encryption without a secret), XFFL_ENETWORK when it cannot
  // listen, and whatever Exchange::publish throws.
  WanBackend(const wan::WanSettings &settings, std::shared_ptr<Exchange> exchange);

  xffl_backend_t kind() const override { return XFFL_BACKEND_WAN; }
  std::unique_ptr<Communicator> create_communicator(const GroupSpec &group) override;
  GroupIdentity claim_group(const std::vector<int> &sorted_members, uint32_t creation) override;
  void release_group(uint32_t slot) noexcept override;
  // The timeout and the log level.
  void apply(const LiveSettings &settings) override;

  const std::string &address() const { return hub_->address(); }

 private:
  std::shared_ptr<Exchange> exchange_;
  std::shared_ptr<wan::WanHub> hub_;
};

// The factory's maker (backend_table.cpp): needs the job's store; refuses to be the main backend.
extern const BackendMaker kWanMaker;

}  // namespace xffl::comm

#endif
