// XFFL_FACILITY_FAULTS_CONTINUE in facility mode (DESIGN.md section 7): the federated average of a
// federation of facility jobs that goes on when a facility is lost, and heals one that returns. This
// file wires the round protocol (federation/epochs.h) into the average; the state hands it this
// rank's place in the layout (Placement below) at each call.
//
// Who holds what, per facility job:
// - job rank 0 holds the facility's lease (federation/facility_lease.h) from xffl_set_global on: the
//   facility is a member while it is renewed;
// - each crossing rank (the sender of one shard: the FEDERATED group's member of this facility) holds a
//   RoundCoordinator over a store connection of its own, made at its first average, and a watch of the
//   member keys and the view that ends its crossing waits when a facility of the round loses its lease
//   or the round moves to another epoch (comm/crossing_wait_hook.h), so that no survivor waits for
//   XFFL_TIMEOUT on a hung facility; its whole part of an average (store requests, crossing waits) ends
//   within XFFL_TIMEOUT - min(1 s, XFFL_TIMEOUT / 10) of the call, so that the facility's other ranks,
//   which wait XFFL_TIMEOUT for its relay, get its status (XFFL_EQUORUM when the store has not answered
//   it for a lease TTL: federation/epochs.h, "Deadlines");
// - every other rank only receives: the relay inside the facility (REPLICA group) carries a header
//   (status, epoch, round, the round's contributing facilities) before the model, so every rank of the
//   facility answers XFFL_ATTR_FEDERATION_EPOCH / _ROUND / XFFL_ATTR_LIVE_FACILITIES alike, and fails
//   with the same status when its sender fails.
//
// One average on a crossing rank: plan = begin_round(); a contributor averages its shard over the
// crossing group of the plan's contributors (the mean of the inputs, each scaled by its FedAvg weight
// renormalised over the contributors, through the WAN hop of federated/wire/wan_hop.h: the exact f32
// allreduce, or in a compressing XFFL_OPT_WIRE_FORMAT each input quantised once, all-gathered and
// decoded in the group's member order, which is the plan's contributors' order on every contributor, so
// the mean is the same bytes on all; with one contributor nothing crosses), then sends the result to
// each joining facility of plan.heal it is the sender for (a group of two, the exact f32 result then
// its HMAC seal, federation/model_seal.h); a joiner receives the model instead and verifies the seal
// (XFFL_EAUTH on a mismatch: never used). Then commit_round. Redo: the input is restored from the saved
// copy, and with error feedback the residual from the copy taken at the call's start (the failed
// attempt may have replaced it with what it meant to send in a round that does not count), and the
// round is done again under the new plan. A call that fails, and one in which this facility only
// receives (a joiner), leave the residual as the call found it. Evicted: this facility lost its membership (its lease ended, or a peer reported it): the
// call waits for its admission at the next round boundary and receives the model, as a restarted
// facility does in its first average. A failure of the crossing transport goes to fail_round: the
// coordinator then drops the facilities whose lease ended, so a lost facility costs the survivors at
// most about one lease TTL.
//
// A round whose outcome is unknown: when commit_round fails after this rank's ack was put (the store
// stopped answering it before the decision, and the call's deadline came), the others may have
// committed the round with this facility's part or redone it without. The call fails and gives the
// caller its input back (and, with error feedback, the residual it started from, after setting aside
// the one the attempt left); the next average first learns the decision (RoundCoordinator::
// await_round) before it plans: counted, this facility receives the model before it contributes again
// (begin_round_receiving: its input is no longer the federation's, and contributing it would count
// its last update twice) and carries the set-aside residual; not counted, it goes on as a contributor
// with its input and residual as restored; no longer a member, it is admitted and receives the model
// as any evicted facility does, with zero residuals when the round may have counted (neither copy can
// be proved right: no residual is sent twice). A joiner's unknown heal round that counted has it
// receive the model again. Memory: the set-aside residual (4 bytes per value of that call) until then.
//
// Group identities: every crossing group of this file is made for one epoch (the allreduce group of
// the epoch's contributors, the heal group of a sender and a joiner), with a serial that encodes the
// epoch, so the bytes of an abandoned epoch never match a group of a later one.
//
// Device memory (the nccl backend, Placement::device_memory; its crossing groups are staged through a
// host backend, wan in facility mode: comm/nccl/host_staged_communicator.h). The round runs on the host
// exactly as above; only its ends move:
// - a crossing rank stages the caller's buffers into one host buffer (packed in order) through a group
//   of one on the main backend, with copies ordered on the caller's stream (after the kernels that made
//   the values) and then waited for (Communicator::synchronize, within XFFL_TIMEOUT, whatever
//   XFFL_OPT_ENQUEUE_ONLY says); the round (the redo's restore, the heal and its seal, the wire formats,
//   error feedback) then works on that host buffer over the crossing groups' host communicators
//   (HostStaging::host(); host_side() in the .cpp), so nothing of it differs from host memory, and the
//   result is the same bytes on every path. A redo stages the input again from the caller's buffers:
//   they are written only once the round committed, when the host buffer is copied back (waited for,
//   as it goes with the call). A failed average leaves them as they were.
// - the relay (the REPLICA group: an NCCL communicator) moves device memory: the header goes through a
//   device scratch of its size (the sender copies it in; every other rank broadcasts into it and copies
//   it out, waited for before it is read, within XFFL_TIMEOUT), then the model is broadcast from the
//   sender's buffers into the others' directly, one broadcast per non-empty buffer, on the caller's
//   stream (under XFFL_OPT_ENQUEUE_ONLY complete in stream order, as any collective). Every rank thus
//   gets its sender's status and the same epoch, round and live facilities, and every wait is bounded
//   as the NCCL backend bounds it (XFFL_TIMEOUT). The crossing rank's deadline (above) is shortened by
//   twice what the staging in took (the copy back comes before the header), so that its facility's
//   ranks still get its status; each staging wait is bounded by XFFL_TIMEOUT on its own: a device whose
//   copies do not complete within it has failed, and those ranks then fail on their own bound
//   (XFFL_ETIMEOUT) rather than on its status.
// Memory, device memory: one host copy of the call's values on crossing ranks for the length of the
// call (pageable; the device buffers are the redo's input, so no second copy), plus error feedback's
// as below and the crossing groups' pinned staging when a group stages itself (never on this path: the
// round uses their host communicators); the other ranks of the facility keep no copy of the model, only
// the header's device scratch (about 500 bytes) during the call.
//
// Memory: one copy of the caller's buffers on crossing ranks (the round's input, for a redo; with
// several buffers, the packed buffer the round works on, repacked from the caller's for a redo); with
// several buffers every other rank of the facility also packs them into one buffer for the relay. With
// a compressing wire format and error feedback, one more f32 copy of the call's values on crossing
// ranks for the length of the call (the residual as the call found it), besides the residual itself
// and the hop's scratch that the state keeps (federated/wire/error_feedback.h, hop_scratch.h).
//
// Threads: average() runs on the caller's thread (xffl_federated_average) or on a request's
// (xffl_federated_average_start, state/request.h), with the state's call gate held either way, so one
// average at a time. Nothing here belongs to a thread: the coordinator's and the watch's store
// connections are this object's and used by one average at a time (the lease renews over its own, on
// its own thread); the wait hook runs the watch on whichever thread waits in the crossing backend; no
// thread-local is read (the call gate's own is not needed: a request holds the gate by its hold). The
// getters may run meanwhile on another thread (the gate lets them through while a request holds it):
// they read progress(), a copy taken under a lock.
#ifndef XFFL_SRC_STATE_FACILITY_ROUNDS_H
#define XFFL_SRC_STATE_FACILITY_ROUNDS_H

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "comm/communicator.h"
#include "common/log.h"
#include "federation/epochs.h"
#include "state/facility_link.h"
#include "xffl/types.h"

namespace xffl {

namespace federation {
class FacilityLease;
}  // namespace federation

namespace federated::wire {
class ErrorFeedback;  // federated/wire/error_feedback.h
class HopScratch;     // federated/wire/hop_scratch.h
}  // namespace federated::wire

class FacilityRounds {
 public:
  // This rank's place in the federated layout, as the state sees it at the call.
  struct Placement {
    std::shared_ptr<comm::Backend> backend;  // the state's (FacilityBackend): crossing groups go over wan
    bool crossing = true;                    // this rank is its shard's sender across facilities
    int shard = 0;                           // this rank's shard index, in [0, shards)
    int shards = 1;                          // crossing ranks per facility
    std::vector<int> crossing_ranks;         // crossing: the global rank of this shard's sender in each facility
    comm::Communicator *relay = nullptr;     // the REPLICA group (HSDP), null without one
    int relay_root = 0;                      // this shard's sender's index in the REPLICA group
    std::vector<double> weights;             // the FedAvg weights per facility; empty: the plain mean
    // The WAN hop of the contributors (federated/wire/wan_hop.h): XFFL_OPT_WIRE_FORMAT, the state's
    // residuals of XFFL_OPT_ERROR_FEEDBACK (null when off) and its kept scratch.
    xffl_wire_format_t wire_format = XFFL_WIRE_F32;
    federated::wire::ErrorFeedback *error_feedback = nullptr;
    federated::wire::HopScratch *hop_scratch = nullptr;
    // The buffers are device memory (the nccl backend; its crossing groups staged through the host):
    // copies and the relay are ordered on `stream` (the caller's; NULL: the backend's pool stream).
    bool device_memory = false;
    void *stream = nullptr;
  };

  // What the last committed round left, as the getters read it: they may run on another thread
  // while a nonblocking average's request runs average() (state/call_gate.h lets them through).
  struct Progress {
    int64_t epoch = 0;
    int64_t round = 0;
    std::vector<int> live;
  };

  // Job rank 0 grants the facility's lease here (a bounded, clear error when the store refuses);
  // every other rank only keeps the link. lease_ttl_seconds: XFFL_FEDERATION_LEASE_TTL or its default.
  FacilityRounds(std::shared_ptr<FacilityLink> link, int job_rank, int timeout_ms, int quorum,
                 int64_t lease_ttl_seconds, const std::string &auth_token, const std::string &job_id, Logger logger);
  ~FacilityRounds();
  FacilityRounds(const FacilityRounds &) = delete;
  FacilityRounds &operator=(const FacilityRounds &) = delete;

  // Collective over the facility's job and, on crossing ranks, over the federation: averages the
  // buffers in place (see the file's comment). Throws XFFL_EQUORUM (the federation halted), XFFL_EAUTH
  // (a heal transfer failed its seal), XFFL_ETIMEOUT, XFFL_EPEER, and what the transports throw; every
  // rank of the facility gets its sender's status.
  void average(const Placement &placement, void *const *bufs, const size_t *counts, size_t n, xffl_dtype_t dtype);

  // The last committed round's epoch, number and contributing facilities (0, 0 and every facility
  // before the first average): a copy, consistent, safe from any thread.
  Progress progress() const;
  // The lease TTL this facility runs with (XFFL_FEDERATION_LEASE_TTL or its default), in seconds.
  int64_t lease_ttl_seconds() const { return lease_ttl_seconds_; }

 private:
  class MemberWatch;
  struct Outcome;

  // The crossing rank's round on `work` (count elements), restore() putting the input back for a redo;
  // all of it ends within XFFL_TIMEOUT - min(1 s, XFFL_TIMEOUT / 10) - reserve (device memory: the
  // staging in, which came before, and the copy back, which comes after).
  void run_crossing(const Placement &placement, uint8_t *work, size_t count, xffl_dtype_t dtype,
                    const std::function<void()> &restore, Outcome &outcome, std::chrono::milliseconds reserve);
  // Learns the outcome of unknown_round_ (see the file's comment) and settles the residuals set aside
  // then; returns why this facility must receive the model before it contributes again, or "".
  std::string settle_unknown_round(federated::wire::ErrorFeedback *feedback);
  comm::Communicator &contributors_group(const Placement &placement, int64_t epoch, bool with_joiners,
                                         const std::vector<int> &contributors);
  std::unique_ptr<comm::Communicator> heal_group(const Placement &placement, int64_t epoch, int sender,
                                                 int joiner);
  // Device memory: a group of one on the main backend whose copies stage the buffers in and out.
  std::unique_ptr<comm::Communicator> device_copies(const Placement &placement) const;
  // The relay group's part: the header (`root`: this rank sends it; otherwise `bytes` receives it),
  // then the model (the caller's buffers on device memory, else `work`, the one or packed buffer).
  void relay_header(const Placement &placement, std::vector<uint8_t> &bytes, bool root) const;
  void relay_model(const Placement &placement, void *const *bufs, const size_t *counts, size_t n, uint8_t *work,
                   size_t count, xffl_dtype_t dtype) const;

  std::shared_ptr<FacilityLink> link_;
  int job_rank_ = 0;
  int timeout_ms_ = 0;
  int quorum_ = 0;
  int64_t lease_ttl_seconds_ = 0;
  std::string auth_token_;
  std::string job_id_;
  Logger logger_;
  std::unique_ptr<federation::FacilityLease> lease_;  // job rank 0 only
  std::unique_ptr<federation::RoundCoordinator> coordinator_;  // crossing ranks, from their first average
  int coordinator_shard_ = -1, coordinator_shards_ = 0;
  std::shared_ptr<MemberWatch> watch_;
  std::shared_ptr<federation::StoreContact> contact_;  // the crossing rank's: its coordinator's and watch's requests
  // The crossing group of the current epoch's contributors, kept between the rounds of one epoch.
  std::unique_ptr<comm::Communicator> contributors_;
  uint64_t contributors_serial_ = 0;
  std::vector<int> contributors_members_;
  // The round this crossing rank acked without learning its decision (commit_round threw), until its
  // next average learns it (its residuals, if any, are set aside in the ErrorFeedback).
  std::optional<federation::RoundPlan> unknown_round_;
  uint64_t unknown_rounds_ = 0;  // how many times unknown_round_ was set: a call tells its own
  mutable std::mutex progress_mutex_;  // guards progress_: written by average(), read by the getters
  Progress progress_;
};

}  // namespace xffl

#endif
