// Facility mode: one job per facility (DESIGN.md section 7). Each facility runs its own job (its own
// launcher and job store, inside the facility) and joins a federation of such jobs through the
// federation's membership store (XFFL_FEDERATION). This file is the one place that knows it: the
// facility's index and offset, the membership store's connection, and the crossing backend's
// rendezvous over it; a federation coordinator (epochs, rounds, the facility's lease) takes it from
// here.
//
// Ranks. RANK and WORLD_SIZE (what xffl_set_global receives) are the job's own: job rank j of facility
// i is global rank O_i + j, O_i = F_0 + ... + F_{i-1} over XFFL_FEDERATED = (F_0, ..., F_{G-1}), and
// W = sum F. The state answers every field with the global values (DESIGN.md section 3 unchanged);
// its main backend (UCX, NCCL) spans the job only (facility_backend.h translates); the groups that
// cross facilities (the FEDERATED family) run on the wan crossing backend, with global ranks, whose
// rendezvous goes through the membership store (federation/membership_exchange.h).
//
// Keys in the membership store (every one under "xffl/<job id>/": XFFL_JOB_ID names the federation
// and must be the same in every facility's job):
//   xffl/<job id>/config/sizes       "F_0,F_1,...": written once, by compare-and-swap, by the first
//                                    facility whose job rank 0 registers; every other facility's
//                                    XFFL_FEDERATED must equal it (XFFL_EINVAL naming both).
//   xffl/<job id>/wan/addr/<r>       "ip:port" of global rank r's wan listener: written by r at its
//                                    first crossing group of more than one member (only senders).
// Who reaches the store: job rank 0 in xffl_set_global (registers; it is always a sender, of shard 0),
// and the senders at their first cross-facility collective. No other rank ever does, except under
// XFFL_FACILITY_FAULTS_CONTINUE, where every rank publishes its crossing address in xffl_set_global
// (state/facility_rounds.h says why) and the senders keep connections of their own for the rounds.
//
// For a federation coordinator (epochs, rounds, the facility's lease; DistributedState::facility_link()
// hands it this object after xffl_set_global): facility(), sizes(), offset(), world_size() and prefix()
// say where the job sits and where its keys go; open_store() gives it a connection of its own (for a
// keep-alive thread: the crossing rendezvous' connection may be held by a wait); crossing_wait_hook()
// ->set(check) makes every wait of the crossing backend run `check`, which ends the wait by throwing
// xffl::Error (a facility declared lost); crossing_exchange() is the rendezvous the wan backend uses.
//
// Thread safety: the accessors are const and safe; membership() is serialised by its own lock;
// open_store() may be called from any thread.
#ifndef XFFL_SRC_STATE_FACILITY_LINK_H
#define XFFL_SRC_STATE_FACILITY_LINK_H

#include <memory>
#include <string>
#include <vector>

#include "comm/crossing_wait_hook.h"
#include "federation/endpoint.h"
#include "federation/membership_exchange.h"
#include "state/options.h"

namespace xffl {

class FacilityLink {
 public:
  // The link of these options for a job rank of a job of job_world_size ranks, or null when neither
  // XFFL_FACILITY nor XFFL_FEDERATION is set (one job is the whole federation). Local: connects to
  // nothing. XFFL_EINVAL, naming the values, for: only one of the two variables set; XFFL_FEDERATED
  // unset or malformed; the facility index outside [0, G); job_world_size != F_i; a malformed
  // endpoint.
  static std::shared_ptr<FacilityLink> from_options(const Options &options, int job_rank, int job_world_size);

  int facility() const { return facility_; }                 // i
  const std::vector<int> &sizes() const { return sizes_; }   // (F_0, ..., F_{G-1})
  int offset() const { return offset_; }                     // O_i: the global rank of job rank 0
  int size() const { return sizes_[static_cast<size_t>(facility_)]; }  // F_i: the job's world size
  int world_size() const { return world_size_; }             // W
  int global_rank(int job_rank) const { return offset_ + job_rank; }
  bool holds(int global_rank) const { return global_rank >= offset_ && global_rank < offset_ + size(); }
  const federation::Endpoint &endpoint() const { return endpoint_; }
  // The host of the store's first member: the crossing backend listens on this host's route to it.
  const std::string &store_host() const { return endpoint_.members.front().host; }
  // "xffl/<job id>/".
  const std::string &prefix() const { return prefix_; }

  // The crossing backend's rendezvous (BackendSetup::exchange of the wan backend) and the hook its
  // waits poll (BackendSetup::crossing_wait_hook): a coordinator ends crossing waits through it.
  std::shared_ptr<federation::MembershipExchange> crossing_exchange() const { return exchange_; }
  std::shared_ptr<comm::CrossingWaitHook> crossing_wait_hook() const { return wait_hook_; }
  // The membership store (connected on first use); hold membership().lock() while using store().
  federation::MembershipExchange &membership() const { return *exchange_; }
  // A new connection to the federation's store with the job's secret and timeout (throws as
  // federation::connect_membership_store does), for a caller that needs its own.
  std::unique_ptr<federation::MembershipStore> open_store() const;

  // Job rank 0, in xffl_set_global once it serves the job's store: connects to the store (a clear,
  // bounded error when it does not answer) and checks this facility's XFFL_FEDERATED against the
  // federation's (config/sizes above), writing it first if no facility did. XFFL_EINVAL when they
  // differ; what the store throws otherwise.
  void register_facility();

  // XFFL_EINVAL unless `sizes` (xffl_federated_scaling's, expanded) are XFFL_FEDERATED's: in facility
  // mode the layout's federated groups are the facilities.
  void check_layout_sizes(const std::vector<int> &sizes) const;

 private:
  FacilityLink() = default;

  int facility_ = 0;
  std::vector<int> sizes_;
  int offset_ = 0;
  int world_size_ = 0;
  int job_rank_ = 0;
  federation::Endpoint endpoint_;
  std::string prefix_;
  std::string sizes_text_;  // "2,4,2"
  std::string secret_;      // XFFL_AUTH_TOKEN; never printed
  int timeout_ms_ = 0;
  std::shared_ptr<federation::MembershipExchange> exchange_;
  std::shared_ptr<comm::CrossingWaitHook> wait_hook_ = std::make_shared<comm::CrossingWaitHook>();
};

}  // namespace xffl

#endif
