// The federation's rounds and epochs (DESIGN.md section 7): which facilities take part in a round of
// the federated average, and the one outcome of each round that every crossing rank of every facility
// agrees on, with the membership store (membership_store.h) as the single arbiter.
//
// Words. An epoch is a set of member facilities (each with its incarnation, facility_lease.h); it
// changes only by compare-and-swap on one key, the view. A round is one federated average; rounds are
// numbered from 1 and the view holds the last committed one. A round is committed in the epoch whose
// members computed it: its result is exactly the (weighted) mean over that epoch's contributing
// facilities, or it is redone, from the same inputs, in a later epoch.
//
// Keys, under a per-job prefix P (federation_prefix):
//   P live/view                 "epoch=E committed=R committed_epoch=C halted=0|1 members=F:INC,... joining=F,..."
//                               written only by compare_and_swap on its mod_revision
//   P live/member/<facility>    the facility's incarnation, attached to its lease (FacilityLease)
//   P live/ack/<facility>/<shard>
//                               "E R": this (facility, shard) finished round R of epoch E; overwritten
//                               every round (facilities x shards keys in all, never more). A put of an
//                               earlier "E R" can still land later: a store connection of a process
//                               that died or was cut off keeps its request in its kernel's send queue
//                               and delivers it when the link is back (seen in tests/netns's cut
//                               test). A rank waiting for its round's decision therefore puts its ack
//                               again when it reads another value there. Under live/ with the view and
//                               the members, so that one listing (or one wait's answer) holds all three.
//
// Who calls: every crossing rank of every facility (one per shard index and facility), each with its own
// RoundCoordinator and its own store connection. Per round, with no fault:
//   plan = begin_round();  ...the crossing all-reduce of this shard among plan.contributors, scaled by
//   plan.weights, and the heal sends/receives of plan.heal...;  decision = commit_round(plan);
// On a transport error naming a peer facility: decision = fail_round(plan, {facility}, cause).
// decision.outcome: Committed (use the result, go on with round plan.round + 1), Redo (restore the
// round's input and do the round again under decision.plan: a new epoch), Evicted (this facility is no
// longer a member: discard the result; the next begin_round waits for the admission, in which it
// receives the model; a facility whose lease ended is registered again by its FacilityLease's thread).
// Halted federations throw
// XFFL_EQUORUM; every wait ends within the timeout with XFFL_ETIMEOUT naming facility, shard, round,
// epoch and what was awaited.
//
// Why every shard uses the same epoch: a round commits only once every (member, shard) ack of that
// (epoch, round) is in the store, and a rank that failed never acks; a failure moves the view to a new
// epoch by CAS. Whichever CAS wins, every rank reads the same view, so all shards of all facilities
// take the same decision. No partial sums: a lost facility's acks are never enough to commit without
// the survivors', and a redo starts from the saved inputs.
//
// Store operations per crossing rank per round, with no fault (bench/facilities/README.md counts
// them): commit_round 1 put (the ack, whose answer it does not wait for: put_unanswered, read before
// the listing's on the same connection; an ack the listing does not show is put again, answered) and
// 1 list of live/ (view, members and acks); a rank that does
// not find the set of acks complete waits on live/, woken by each later ack. A rank that finds it
// complete commits: when the commit changes no membership, with a compare_and_swap whose answer it
// does not wait for (compare_and_swap_unanswered: once every ack is in, the round is committed whoever
// swaps, and next_view of one view gives the same bytes on every rank), else with one it waits for (its
// answer carries the view as it is now: no list after it). begin_round reads nothing when the last
// decision is less than kReuseViewMs old: it plans from the view that decision carried. So a round with
// no membership change waits for 1 round trip (the put and the list sent together; etcd: 2, its put
// is answered); before session 9 it was 6 (begin's list, put, two lists, CAS, a list again), in
// session 9 2 (put, list). Reusing a view is safe: between two rounds nothing changes the view
// but a failure report or a lost lease in the next round, a crossing rank's member watch
// (round_still_current) ends its crossing when the view's epoch moves or a member's key is gone or
// replaced, and the decision is taken on a listing read after the ack, as before. One race costs a
// redo: a registration that one rank's listing holds and another's does not (a facility admitted at
// that very round boundary) lets the second plan the next round in the old epoch until its watch sees
// the new one. A fault costs each rank one more list and wait, and one CAS for the reporters.
//
// Deadlines: set_deadline bounds every later call (the crossing rank's whole average, FacilityRounds);
// every store request is bounded by what is left of it (set_call_timeout), a request that gets no
// answer (XFFL_ETIMEOUT, XFFL_ENETWORK) is tried again until then, and at the deadline the call throws
// XFFL_EQUORUM when the store has not answered this rank for at least one lease TTL (its lease has ended
// or cannot be renewed: the facility is out of the federation and counts no quorum alone; it is
// readmitted when it reaches the store again), XFFL_ETIMEOUT otherwise (the store answers, the others do
// not), each naming rank, facility, shard, what was awaited and for how long.
//
// Not thread-safe: one call at a time per object (StoreContact is shared, and thread-safe).
#ifndef XFFL_SRC_FEDERATION_EPOCHS_H
#define XFFL_SRC_FEDERATION_EPOCHS_H

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "federation/membership_store.h"

namespace xffl::federation {

using Clock = std::chrono::steady_clock;

// A round boundary shorter than this reuses the view the last decision carried (see above).
constexpr int64_t kReuseViewMs = 1000;

// Whether the membership store answers one crossing rank, over any of its connections (its coordinator's,
// its member watch's): an average that gives up says whether the store was silent, and since when.
// Thread-safe.
class StoreContact {
 public:
  void answered() { silent_since_ns_.store(0); }
  // A request sent at `asked` got no answer: the store is silent since then, unless it already was.
  void unanswered(Clock::time_point asked) {
    int64_t expected = 0;
    silent_since_ns_.compare_exchange_strong(expected, std::max<int64_t>(1, asked.time_since_epoch().count()));
  }
  std::optional<Clock::time_point> silent_since() const {
    const int64_t since = silent_since_ns_.load();
    if (since == 0) return std::nullopt;
    return Clock::time_point(Clock::duration(since));
  }

 private:
  std::atomic<int64_t> silent_since_ns_{0};
};

struct CoordinatorConfig {
  std::string prefix;  // federation_prefix(job id)
  int facility = 0;    // this crossing rank's facility, in [0, facilities)
  int facilities = 0;  // the number of facilities in XFFL_FEDERATED
  int shard = 0;       // this crossing rank's shard index, in [0, shards)
  int shards = 1;      // crossing ranks per facility (the same in every facility)
  int quorum = 0;      // members needed to go on; 0: a majority of `facilities`
  std::vector<double> weights;  // one per facility (the user's FedAvg weights, > 0); empty: equal
  int timeout_ms = 0;           // bounds every call (XFFL_TIMEOUT)
  int64_t lease_ttl_seconds = 0;  // the facilities' lease TTL: how often the acks are re-read while waiting
  int rank = -1;                  // this crossing rank's global rank, for messages (-1: not said)
  std::shared_ptr<StoreContact> contact;  // shared with the rank's member watch; null: one of its own
};

// Who sends the model to a joining facility, for this plan's shard.
struct HealTransfer {
  int joiner = 0;  // the facility that receives
  int sender = 0;  // the contributing facility whose crossing rank of this shard sends
};

struct RoundPlan {
  int64_t epoch = 0;
  int64_t round = 0;                // the round this plan computes (committed + 1)
  std::vector<int> members;         // facilities of the epoch, sorted (joining ones included)
  std::vector<int> contributors;    // members that contribute to the mean (members minus joining)
  std::vector<int> joining;         // members admitted in this epoch: they contribute nothing and receive
  std::vector<HealTransfer> heal;   // one per joining facility, for this shard
  std::vector<double> weights;      // one per facility of XFFL_FEDERATED: w_f / sum over contributors, else 0
  bool self_joining = false;        // this facility receives the model in this round
  std::string incarnation;          // this facility's incarnation in the epoch
  std::map<int, std::string> incarnations;  // every member's incarnation in the epoch
};

// Whether the round of `plan` can still be computed as planned, from a listing of the prefix's live/
// keys: "" when so, else why not (the view moved to another epoch, or halted; a member's key is gone or
// holds another incarnation). A crossing rank's member watch ends its crossing waits on a non-empty answer.
std::string round_still_current(const std::string &prefix, int facilities, const RoundPlan &plan,
                                const Listing &live);

enum class RoundOutcome { Committed, Redo, Evicted };

struct RoundDecision {
  RoundOutcome outcome = RoundOutcome::Committed;
  RoundPlan plan;     // Redo: the new plan (same round, a later epoch); Committed: the committed plan
  std::string cause;  // Redo / Evicted: what happened (which facility was lost, and why), for the log
};

const char *outcome_name(RoundOutcome outcome);

class RoundCoordinator {
 public:
  // Takes a store connection of its own. Throws XFFL_EINVAL naming the value: a facility or shard out of
  // range, a quorum outside [0, facilities], weights of another count or not > 0, a timeout <= 0.
  RoundCoordinator(std::unique_ptr<MembershipStore> store, CoordinatorConfig config);

  // The next round's plan. Forms the first epoch when there is no view yet (once every facility has
  // registered: all of them, as today's start). For a facility that is not a member (restarted or
  // evicted), waits until a round boundary admits it; its plan then says self_joining and plan.round
  // is the round it resumes at. Throws XFFL_EQUORUM when the federation halted, XFFL_ETIMEOUT naming
  // what it awaited (the facilities not registered, or the admission).
  RoundPlan begin_round();
  // This rank's part of the round succeeded (its shard is averaged, or received and verified): acks
  // it, then waits for the round's decision. Throws XFFL_EQUORUM, XFFL_ETIMEOUT naming the acks
  // missing, XFFL_EINVAL for a plan of another facility/shard.
  RoundDecision commit_round(const RoundPlan &plan);
  // This rank's part failed: `lost` are the facilities a transport error named (may be empty: then it
  // only follows the others' decision). Moves the view to a new epoch without them (unless the round
  // was decided already), then waits for the decision as commit_round does.
  RoundDecision fail_round(const RoundPlan &plan, const std::vector<int> &lost, const std::string &cause);

  // A round whose outcome this rank did not learn: its commit_round threw after the ack was put (the
  // store stopped answering it, the deadline came), so the others may have committed the round with
  // this facility's part, or redone it without. Called again later (the facility's next average),
  // await_round waits for that decision as commit_round does (putting the ack again if it was
  // overwritten while the round is still open): Committed means the round counted this facility's
  // part in plan.epoch; Redo, that it did not and this facility is a contributor of decision.plan;
  // Evicted, that it is no longer a member (decision.plan.round - 1 is the last committed round: at
  // most plan.round - 1 proves the round did not count; otherwise it may have). Throws as
  // commit_round does.
  RoundDecision await_round(const RoundPlan &plan);
  // begin_round for a facility that must receive the model although it is a member: its last round
  // counted its part (await_round said Committed), but it gave the caller its input back and does not
  // hold the result. When the plan would have it contribute, it moves the view by compare-and-swap to
  // a new epoch with the same members in which this facility is joining (the others' round in progress
  // is redone; they send it the model, as to a restarted facility; no quorum changes), then plans
  // from that view: self_joining. When it is the only contributor left, no one can send it the model:
  // the plan is begin_round's, and it contributes what it holds. `cause` goes into the view's cause,
  // for the log.
  RoundPlan begin_round_receiving(const std::string &cause);

  // Every later call ends by `deadline` (Clock::time_point::max(): each call's own timeout only).
  void set_deadline(Clock::time_point deadline) { deadline_ = deadline; }
  const std::shared_ptr<StoreContact> &contact() const { return contact_; }

 private:
  // One call's bound and what it waits for, for the message when it ends.
  struct Phase {
    Clock::time_point started, deadline;
    std::string what;     // "no round to begin", "round 3 of epoch 2 undecided"
    std::string awaited;  // updated as the call learns more
  };
  Phase phase(std::string what) const;
  // Runs request(call_timeout_ms) against the store, again while it gets no answer, until the phase's
  // deadline; then throws (see "Deadlines").
  template <typename Request>
  auto ask(const Phase &phase, Request request) -> decltype(request(int64_t{0}));
  std::optional<Listing> wait_live(const Phase &phase, const Listing &since, int64_t wait_ms);
  [[noreturn]] void give_up(const Phase &phase) const;

  // acked: this rank put its ack of the plan's round (commit_round); it puts it again when it finds it
  // overwritten.
  RoundDecision await_decision(const RoundPlan &plan, bool acked, const std::string &failure);
  void check_plan(const RoundPlan &plan) const;

  std::unique_ptr<MembershipStore> store_;
  CoordinatorConfig config_;
  std::shared_ptr<StoreContact> contact_;
  std::string where_;  // "rank R (facility F shard S)" for messages
  Clock::time_point deadline_ = Clock::time_point::max();
  // The listing of live/ the last decision carried: begin_round plans from it while it is young.
  std::optional<Listing> decided_;
  Clock::time_point decided_at_{};
  std::string last_store_error_;
};

}  // namespace xffl::federation

#endif
