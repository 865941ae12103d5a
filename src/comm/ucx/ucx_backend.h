// XFFL_BACKEND_UCX: host memory over whatever UCX reaches (shared memory, TCP, InfiniBand).
// One context and worker per backend; peers' worker addresses come through the Exchange, endpoints
// are made on first use. create_communicator is local: a group is its member list and tag space.
//
// Lifetime: the Exchange must outlive the backend and every communicator it made (endpoints are
// made lazily and fetch addresses through it). Communicators may outlive the backend.
// Not thread-safe: one thread drives a backend and its communicators.
#ifndef XFFL_SRC_COMM_UCX_UCX_BACKEND_H
#define XFFL_SRC_COMM_UCX_UCX_BACKEND_H

#include <memory>

#include "comm/algorithms/point_to_point.h"
#include "comm/backend_table.h"
#include "comm/communicator.h"
#include "comm/exchange.h"

namespace xffl::comm::ucx {
class UcxWorker;
}

namespace xffl::comm {

class UcxBackend final : public Backend {
 public:
  // Loads UCX on first use (comm/ucx/ucx_api.h), brings it up and publishes this rank's worker address
  // under "ucx/addr/<rank>" ("ucx/crossing/addr/<rank>" for a crossing backend). process_settings and
  // crossing (the backend of XFFL_OPT_CROSS_FACILITY_BACKEND=ucx: its own context, every message
  // eager): see UcxSettings. Throws xffl::Error: XFFL_EINVAL for a bad rank/size/timeout,
  // XFFL_EUNSUPPORTED when UCX cannot be loaded, XFFL_EBACKEND when UCX refuses, and whatever
  // Exchange::publish throws.
  UcxBackend(int rank, int world_size, Exchange &exchange, int timeout_ms, xffl_log_level_t log_level,
             bool process_settings = false, bool crossing = false);
  ~UcxBackend() override;

  // Loads UCX into the process if it is not yet (comm/ucx/ucx_api.h: once, keeping the host's signal
  // handlers). Throws xffl::Error XFFL_EUNSUPPORTED, in dlerror()'s words, when it cannot be loaded.
  // The constructor calls it too; set_global calls it first, so that a rank without UCX fails before
  // the rendezvous instead of leaving the others to wait for it.
  static void load_ucx();

  xffl_backend_t kind() const override { return XFFL_BACKEND_UCX; }
  std::unique_ptr<Communicator> create_communicator(const GroupSpec &group) override;
  GroupIdentity claim_group(const std::vector<int> &sorted_members, uint32_t creation) override;
  void release_group(uint32_t slot) noexcept override;
  // set_global calls it right after the bring-up barrier (every rank has published): loads the job's
  // address table (every rank's host, process and worker address), so that from then on no endpoint,
  // liveness check or revoke notice needs the store (a failure is logged, ucx_worker.h); the same for
  // the crossing backend's, which it passes `world` on to.
  void register_world(const GroupSpec &world) override;

  // Apply to every collective started afterwards, on every communicator of this backend.
  void set_timeout_ms(int timeout_ms);
  int timeout_ms() const;
  void set_log_level(xffl_log_level_t level);
  // The timeout and the log level (stream ordering means nothing to host memory).
  void apply(const LiveSettings &settings) override;
  void set_tuning(const algorithms::Tuning &tuning);
  const algorithms::Tuning &tuning() const;
  // Applies to endpoints made afterwards; see UcxSettings::peer_failure_detection_on_host.
  void set_peer_failure_detection_on_host(bool on);
  // Groups that cross facilities go over `host` (the wan backend: XFFL_OPT_CROSS_FACILITY_BACKEND). The
  // replica groups then receive the federated average's relay as a plain broadcast, since the sender's
  // all-reduce runs on the other backend and cannot feed UCX's chunk-by-chunk relay.
  void set_crossing_backend(std::shared_ptr<Backend> host) override;

 private:
  std::shared_ptr<Backend> crossing_;  // null: every group on UCX
  std::shared_ptr<ucx::UcxWorker> worker_;
  Exchange &exchange_;
};

// The factory's maker (backend_table.cpp): loads UCX before the rendezvous; the backend made keeps
// the job's store (BackendSetup::exchange) alive as long as itself, since endpoints are made lazily
// from the addresses in it; set_global waits for every rank's address (barrier). Takes a crossing
// backend (XFFL_OPT_CROSS_FACILITY_BACKEND = XFFL_BACKEND_WAN).
extern const BackendMaker kUcxMaker;

}  // namespace xffl::comm

#endif
