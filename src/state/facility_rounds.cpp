#include "state/facility_rounds.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <mutex>
#include <new>
#include <optional>

#include "comm/dtype.h"
#include "common/error.h"
#include "federation/epochs.h"
#include "federation/facility_lease.h"
#include "federation/model_seal.h"
#include "federated/strategy.h"
#include "federated/wire/error_feedback.h"
#include "federated/wire/wan_hop.h"
#include "xffl/status.h"

namespace xffl {

namespace {

using Clock = std::chrono::steady_clock;
using federation::RoundDecision;
using federation::RoundOutcome;
using federation::RoundPlan;

// The crossing groups of this file share one tag, unused by the layout's groups (family 7 of the last
// generation: the layout has families 0 to 6), and differ by their serial: kind (bits 60-61), the
// layout's shard count (44-59), the epoch (contributors: 1-43; heal: 20-43) and the joiner (heal: 0-19).
constexpr unsigned long long kRoundsTag = (1ULL << 19) - 1;
constexpr uint64_t kContributorsKind = uint64_t{1} << 60;
constexpr uint64_t kHealKind = uint64_t{2} << 60;
// How often a crossing wait re-reads the member keys (one listing per crossing rank and period).
constexpr int kWatchPeriodMs = 200;
// Room for the sender's message in the relay header; a longer message is cut.
constexpr size_t kMessageBytes = 480;

// The communicator a crossing round talks over: a group's host-memory communicator when its buffers are
// device memory staged through the host (NCCL's crossing groups: comm/nccl/host_staged_communicator.h),
// since the round works on a host copy of the shard on every path; the group itself otherwise.
comm::Communicator &host_side(comm::Communicator &group) {
  comm::HostStaging *staging = group.host_staging();
  return staging ? staging->host() : group;
}

std::string join(const std::vector<int> &values) {
  std::string out;
  for (int value : values) out += (out.empty() ? "" : ",") + std::to_string(value);
  return out.empty() ? "none" : out;
}

// What the sender of a shard tells its relay group before the model: the status of the round on the
// crossing rank, the committed round and its contributing facilities (a bitmap), and the message of
// a failure.
struct Header {
  int64_t status = XFFL_OK;
  int64_t epoch = 0;
  int64_t round = 0;
  std::vector<int> live;
  std::string message;
};

size_t header_bytes(int facilities) { return 3 * 8 + (static_cast<size_t>(facilities) + 63) / 64 * 8 + kMessageBytes; }

void put_u64(uint8_t *out, uint64_t value) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<uint8_t>(value >> (8 * i));
}
uint64_t get_u64(const uint8_t *in) {
  uint64_t value = 0;
  for (int i = 0; i < 8; ++i) value |= static_cast<uint64_t>(in[i]) << (8 * i);
  return value;
}

std::vector<uint8_t> encode(const Header &header, int facilities) {
  std::vector<uint8_t> out(header_bytes(facilities), 0);
  put_u64(out.data(), static_cast<uint64_t>(header.status));
  put_u64(out.data() + 8, static_cast<uint64_t>(header.epoch));
  put_u64(out.data() + 16, static_cast<uint64_t>(header.round));
  uint8_t *bitmap = out.data() + 24;
  for (int f : header.live)
    if (f >= 0 && f < facilities) bitmap[f / 8] = static_cast<uint8_t>(bitmap[f / 8] | (1u << (f % 8)));
  const size_t length = std::min(header.message.size(), kMessageBytes - 1);
  std::memcpy(out.data() + out.size() - kMessageBytes, header.message.data(), length);
  return out;
}

Header decode(const std::vector<uint8_t> &in, int facilities) {
  Header header;
  header.status = static_cast<int64_t>(get_u64(in.data()));
  header.epoch = static_cast<int64_t>(get_u64(in.data() + 8));
  header.round = static_cast<int64_t>(get_u64(in.data() + 16));
  const uint8_t *bitmap = in.data() + 24;
  for (int f = 0; f < facilities; ++f)
    if (bitmap[f / 8] & (1u << (f % 8))) header.live.push_back(f);
  const char *message = reinterpret_cast<const char *>(in.data() + in.size() - kMessageBytes);
  header.message.assign(message, strnlen(message, kMessageBytes));
  return header;
}

}  // namespace

// Ends the crossing waits of a round when the round can no longer complete as planned (a facility of
// the round has no member key any more or registered again, the view moved to another epoch:
// federation::round_still_current), instead of letting them run to XFFL_TIMEOUT; and at the average's
// deadline (FacilityRounds::run_crossing), so that a crossing rank cut off from the others and the store
// ends its average within the timeout. Polled by the crossing backend on the waiting thread
// (comm/crossing_wait_hook.h); reads the store at most once per kWatchPeriodMs over a connection of its
// own, each read bounded by call_bound_ms and the deadline.
class FacilityRounds::MemberWatch {
 public:
  MemberWatch(std::unique_ptr<federation::MembershipStore> store, std::string prefix, int facilities,
              std::shared_ptr<federation::StoreContact> contact, int64_t call_bound_ms)
      : store_(std::move(store)),
        prefix_(std::move(prefix)),
        facilities_(facilities),
        contact_(std::move(contact)),
        call_bound_ms_(call_bound_ms) {}

  // The round now crossing (null: nothing is watched) and its average's deadline.
  void watch(const RoundPlan *plan, Clock::time_point started, Clock::time_point deadline) {
    std::lock_guard<std::mutex> lock(mutex_);
    plan_.reset();
    if (plan) plan_ = *plan;
    started_ = started;
    deadline_ = deadline;
    next_ = Clock::now() + std::chrono::milliseconds(kWatchPeriodMs);
  }

  void check() {
    RoundPlan plan;
    Clock::time_point deadline, started;
    const Clock::time_point now = Clock::now();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!plan_) return;
      deadline = deadline_;
      started = started_;
      if (now < deadline && now < next_) return;
      next_ = now + std::chrono::milliseconds(kWatchPeriodMs);
      plan = *plan_;
    }
    const auto elapsed_ms = std::chrono::duration_cast<std::chrono::milliseconds>(now - started).count();
    if (now >= deadline)
      fail(XFFL_ETIMEOUT, "the crossing of round ", plan.round, " of epoch ", plan.epoch, " (facilities ",
           join(plan.members), ") had not completed ", elapsed_ms, " ms into the federated average, its deadline");
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count();
    store_->set_call_timeout(static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(left, call_bound_ms_))));
    federation::Listing listing;
    try {
      listing = store_->list(prefix_ + "live/");
      contact_->answered();
    } catch (const Error &error) {
      // The store is unreachable: no early end (its silence alone proves nothing about the round: an
      // etcd electing a leader answers no one); the deadline above still ends the wait.
      if (error.status() == XFFL_ETIMEOUT || error.status() == XFFL_ENETWORK) contact_->unanswered(now);
      return;
    }
    const std::string why = federation::round_still_current(prefix_, facilities_, plan, listing);
    if (!why.empty()) fail(XFFL_EPEER, why, ", so the crossing wait of round ", plan.round, " ends");
  }

 private:
  std::unique_ptr<federation::MembershipStore> store_;
  std::string prefix_;
  int facilities_;
  std::shared_ptr<federation::StoreContact> contact_;
  int64_t call_bound_ms_;
  std::mutex mutex_;
  std::optional<RoundPlan> plan_;
  Clock::time_point started_{}, deadline_{};
  Clock::time_point next_{};
};

// How a crossing rank's round ended, for its relay group.
struct FacilityRounds::Outcome {
  int64_t epoch = 0;
  int64_t round = 0;
  std::vector<int> contributors;
};

FacilityRounds::FacilityRounds(std::shared_ptr<FacilityLink> link, int job_rank, int timeout_ms, int quorum,
                               int64_t lease_ttl_seconds, const std::string &auth_token, const std::string &job_id,
                               Logger logger)
    : link_(std::move(link)),
      job_rank_(job_rank),
      timeout_ms_(timeout_ms),
      quorum_(quorum),
      lease_ttl_seconds_(lease_ttl_seconds),
      auth_token_(auth_token),
      job_id_(job_id),
      logger_(std::move(logger)) {
  for (int f = 0; f < static_cast<int>(link_->sizes().size()); ++f) progress_.live.push_back(f);
  contact_ = std::make_shared<federation::StoreContact>();
  if (job_rank_ == 0)
    lease_ = std::make_unique<federation::FacilityLease>(link_->endpoint(), auth_token_, timeout_ms_, link_->prefix(),
                                                         link_->facility(), lease_ttl_seconds_);
}

FacilityRounds::Progress FacilityRounds::progress() const {
  std::lock_guard<std::mutex> lock(progress_mutex_);
  return progress_;
}

FacilityRounds::~FacilityRounds() {
  if (watch_) link_->crossing_wait_hook()->set({});
}

comm::Communicator &FacilityRounds::contributors_group(const Placement &placement, int64_t epoch, bool with_joiners,
                                                       const std::vector<int> &contributors) {
  // Within an epoch the contributors differ only between its first round (with joiners) and the
  // others; the layout's shard count tells a later layout's groups apart.
  const uint64_t serial = kContributorsKind | (static_cast<uint64_t>(placement.shards & 0xffff) << 44) |
                          (static_cast<uint64_t>(epoch) << 1) | (with_joiners ? 1 : 0);
  std::vector<int> members;
  for (int f : contributors) members.push_back(placement.crossing_ranks[static_cast<size_t>(f)]);
  if (contributors_ && contributors_serial_ == serial && contributors_members_ == members) return *contributors_;
  contributors_.reset();
  const int me = placement.crossing_ranks[static_cast<size_t>(link_->facility())];
  const int my_index = static_cast<int>(std::find(members.begin(), members.end(), me) - members.begin());
  comm::GroupSpec spec{topology::RankList::explicit_ranks(members), my_index,
                       "crossing group of shard " + std::to_string(placement.shard) + " in epoch " +
                           std::to_string(epoch) + " (facilities " + join(contributors) + ")",
                       kRoundsTag};
  spec.serial = serial;
  spec.crosses_facilities = true;
  contributors_ = placement.backend->create_communicator(spec);
  contributors_serial_ = serial;
  contributors_members_ = members;
  return *contributors_;
}

std::unique_ptr<comm::Communicator> FacilityRounds::heal_group(const Placement &placement, int64_t epoch, int sender,
                                                               int joiner) {
  const int from = placement.crossing_ranks[static_cast<size_t>(sender)];
  const int to = placement.crossing_ranks[static_cast<size_t>(joiner)];
  const int me = link_->facility() == sender ? from : to;
  std::vector<int> members{std::min(from, to), std::max(from, to)};
  comm::GroupSpec spec{topology::RankList::explicit_ranks(members), members[0] == me ? 0 : 1,
                       "heal group of shard " + std::to_string(placement.shard) + " in epoch " + std::to_string(epoch) +
                           " (facility " + std::to_string(sender) + " to facility " + std::to_string(joiner) + ")",
                       kRoundsTag};
  spec.serial = kHealKind | (static_cast<uint64_t>(placement.shards & 0xffff) << 44) |
                (static_cast<uint64_t>(epoch) << 20) | static_cast<uint64_t>(joiner & 0xfffff);
  spec.crosses_facilities = true;
  return placement.backend->create_communicator(spec);
}

std::string FacilityRounds::settle_unknown_round(federated::wire::ErrorFeedback *feedback) {
  if (!unknown_round_) return "";
  const RoundPlan acked = *unknown_round_;
  const RoundDecision decision = coordinator_->await_round(acked);  // throws: still unknown, for the next call
  unknown_round_.reset();
  const bool counted = decision.outcome == RoundOutcome::Committed;
  // Evicted: the last committed round is decision.plan.round - 1; below the acked round, the round
  // did not count; at or past it, it may have (committed in its epoch, then this facility dropped).
  const bool unknown = decision.outcome == RoundOutcome::Evicted && decision.plan.round > acked.round;
  if (feedback) {  // settles what the failed call set aside, if it set anything aside
    using Settlement = federated::wire::ErrorFeedback::Settlement;
    feedback->settle(counted ? Settlement::Counted : unknown ? Settlement::Unknown : Settlement::NotCounted);
  }
  if (coordinator_shard_ == 0)
    logger_.info("federation: round ", acked.round, " of epoch ", acked.epoch, ", which facility ", link_->facility(),
                 " acknowledged in an average that ended without its decision, ",
                 counted   ? "counted this facility's part: it receives the model before it contributes again"
                 : unknown ? "may have counted this facility's part (it is no longer a member): it receives the model"
                           : "did not count this facility's part");
  if (!counted) return "";  // evicted: it receives the model at its admission anyway
  return "round " + std::to_string(acked.round) + " counted its part, but its average ended without the decision";
}

void FacilityRounds::run_crossing(const Placement &placement, uint8_t *work, size_t count, xffl_dtype_t dtype,
                                  const std::function<void()> &restore, Outcome &outcome,
                                  std::chrono::milliseconds reserve) {
  const int self = link_->facility();
  const int facilities = static_cast<int>(link_->sizes().size());
  if (!coordinator_ || coordinator_shard_ != placement.shard || coordinator_shards_ != placement.shards) {
    federation::CoordinatorConfig config;
    config.prefix = link_->prefix();
    config.facility = self;
    config.facilities = facilities;
    config.shard = placement.shard;
    config.shards = placement.shards;
    config.quorum = quorum_;
    config.timeout_ms = timeout_ms_;
    config.lease_ttl_seconds = lease_ttl_seconds_;
    config.rank = link_->global_rank(job_rank_);
    config.contact = contact_;
    coordinator_ = std::make_unique<federation::RoundCoordinator>(link_->open_store(), config);
    coordinator_shard_ = placement.shard;
    coordinator_shards_ = placement.shards;
  }
  if (!watch_) {
    const int64_t bound_ms = std::min<int64_t>(timeout_ms_, std::max<int64_t>(kWatchPeriodMs, lease_ttl_seconds_ * 500));
    watch_ = std::make_shared<MemberWatch>(link_->open_store(), link_->prefix(), facilities, contact_, bound_ms);
    link_->crossing_wait_hook()->set([watch = watch_] { watch->check(); });
  }
  // The whole of this rank's part ends within the timeout, a little before it (min(1 s, timeout / 10)),
  // so that the ranks of its relay group, which wait the timeout for it, get its status.
  // Less `reserve` on device memory: the staging in, which came before, and the copy back, which comes
  // before the relay's header.
  const Clock::time_point average_started = Clock::now();
  const Clock::time_point deadline =
      average_started + std::chrono::milliseconds(timeout_ms_ - std::min(1000, timeout_ms_ / 10)) - reserve;
  coordinator_->set_deadline(deadline);
  const bool logs = placement.shard == 0;  // one line per facility, from the crossing rank of shard 0
  const size_t bytes = count * comm::dtype_size(dtype);
  // The residuals set aside are in the state's store whatever this call's format: settled there.
  const std::string receive_because = settle_unknown_round(placement.error_feedback);
  RoundPlan plan =
      receive_because.empty() ? coordinator_->begin_round() : coordinator_->begin_round_receiving(receive_because);
  while (true) {
    std::string failure;
    bool seal_failed = false;
    watch_->watch(&plan, average_started, deadline);
    try {
      if (plan.self_joining) {
        const auto heal = std::find_if(plan.heal.begin(), plan.heal.end(),
                                       [&](const federation::HealTransfer &h) { return h.joiner == self; });
        if (heal == plan.heal.end())
          fail(XFFL_EINTERNAL, "federation: facility ", self, " joins in epoch ", plan.epoch, " without a sender");
        if (logs)
          logger_.info("federation: facility ", self, " admitted in epoch ", plan.epoch, ": it receives the model of ",
                       "round ", plan.round, " from facility ", heal->sender, " and contributes from the next round");
        std::unique_ptr<comm::Communicator> made = heal_group(placement, plan.epoch, heal->sender, self);
        comm::Communicator *group = &host_side(*made);
        const int root = placement.crossing_ranks[static_cast<size_t>(heal->sender)] <
                                 placement.crossing_ranks[static_cast<size_t>(self)]
                             ? 0
                             : 1;
        group->broadcast(work, count, dtype, root, nullptr);
        federation::Seal seal{};
        group->broadcast(seal.data(), seal.size(), XFFL_U8, root, nullptr);
        const federation::SealContext context{plan.epoch, plan.round, placement.shard, heal->sender, self};
        const Clock::time_point verifying = Clock::now();
        try {
          federation::verify_model_seal(auth_token_, job_id_, context, work, bytes, seal);
        } catch (const Error &) {
          seal_failed = true;
          throw;
        }
        if (logs)
          logger_.info("federation: facility ", self, " verified the seal of the model of round ", plan.round, " (",
                       bytes, " bytes) in ", std::chrono::duration<double>(Clock::now() - verifying).count(), " s");
      } else {
        comm::Communicator &group =
            host_side(contributors_group(placement, plan.epoch, !plan.joining.empty(), plan.contributors));
        double premul = 1.0;
        if (!placement.weights.empty()) {
          // FedAvg over the round's contributors: |C| w_f / sum over C, then the AVG (as in FAIL mode
          // with every facility: the same bytes when no facility is missing).
          double sum = 0;
          for (int f : plan.contributors) sum += placement.weights[static_cast<size_t>(f)];
          if (!(sum > 0))
            fail(XFFL_EINVAL, "federated weights of the round's facilities ", join(plan.contributors),
                 " sum to ", sum, "; it must be positive");
          premul = static_cast<double>(plan.contributors.size()) * placement.weights[static_cast<size_t>(self)] / sum;
        }
        // The WAN hop over the contributors group (federated/wire/wan_hop.h): the exact f32 allreduce,
        // or, for a compressing format with two or more contributors, each quantised once, all-gathered,
        // and decoded and summed in the group's member order, which is plan.contributors' order on
        // every contributor (the committed epoch's): the same bytes in the same order everywhere. With
        // one contributor nothing crosses and its residual is left as it was.
        federated::Roles roles;
        roles.federated = &group;
        roles.federated_groups = static_cast<int>(plan.contributors.size());
        roles.federated_rank = static_cast<int>(
            std::find(plan.contributors.begin(), plan.contributors.end(), self) - plan.contributors.begin());
        roles.weight_factor = premul;
        roles.weighted = !placement.weights.empty();
        roles.wire_format = placement.wire_format;
        roles.error_feedback = placement.error_feedback;
        roles.hop_scratch = placement.hop_scratch;
        federated::wire::cross_facilities(roles, work, count, dtype, nullptr);
        for (const federation::HealTransfer &heal : plan.heal) {
          if (heal.sender != self) continue;
          const Clock::time_point started = Clock::now();
          std::unique_ptr<comm::Communicator> made = heal_group(placement, plan.epoch, self, heal.joiner);
          comm::Communicator *to = &host_side(*made);
          const int root = placement.crossing_ranks[static_cast<size_t>(self)] <
                                   placement.crossing_ranks[static_cast<size_t>(heal.joiner)]
                               ? 0
                               : 1;
          to->broadcast(work, count, dtype, root, nullptr);
          federation::Seal seal = federation::seal_model(
              auth_token_, job_id_, {plan.epoch, plan.round, placement.shard, self, heal.joiner}, work, bytes);
          to->broadcast(seal.data(), seal.size(), XFFL_U8, root, nullptr);
          if (logs)
            logger_.info("federation: facility ", self, " sent the model of round ", plan.round, " to facility ",
                         heal.joiner, " (", bytes, " bytes, then its seal) in ",
                         std::chrono::duration<double>(Clock::now() - started).count(), " s");
        }
      }
    } catch (const Error &error) {
      failure = error.what();
      if (failure.empty()) failure = xffl_status_string(error.status());
      if (seal_failed) {
        // Never used: this facility reports itself lost so that the others go on without it, then
        // the caller gets XFFL_EAUTH; its next average asks for the model again.
        watch_->watch(nullptr, average_started, deadline);
        contributors_.reset();
        RoundDecision decision = coordinator_->fail_round(plan, {self}, failure);
        while (decision.outcome == RoundOutcome::Redo)
          decision = coordinator_->fail_round(decision.plan, {self}, failure);
        throw;
      }
    }
    watch_->watch(nullptr, average_started, deadline);
    if (!failure.empty()) contributors_.reset();  // a failed communicator is unusable
    RoundDecision decision;
    if (failure.empty()) {
      try {
        decision = coordinator_->commit_round(plan);
      } catch (const Error &error) {
        // The ack may be in the store and the round committed by the others with this facility's part:
        // the next average learns which (settle_unknown_round); average() sets the residuals aside.
        unknown_round_ = plan;
        ++unknown_rounds_;
        fail(error.status(), error.what(), ". Facility ", self, " acknowledged round ", plan.round, " of epoch ",
             plan.epoch, " before that: the others may have counted its part; its next average learns whether ",
             "they did and, if so, receives the model before it contributes again");
      }
    } else {
      decision = coordinator_->fail_round(plan, {}, failure);
    }
    switch (decision.outcome) {
      case RoundOutcome::Committed:
        if (logs && decision.cause.find(" became epoch ") != std::string::npos)
          logger_.info("federation: ", decision.cause);
        outcome.epoch = plan.epoch;
        outcome.round = plan.round;
        outcome.contributors = plan.contributors;
        return;
      case RoundOutcome::Redo:
        if (logs)
          logger_.info("federation: round ", plan.round, " is redone in epoch ", decision.plan.epoch, ": ",
                       decision.cause, failure.empty() ? "" : " (here: " + failure + ")");
        restore();
        plan = decision.plan;
        break;
      case RoundOutcome::Evicted:
        if (logs)
          logger_.info("federation: facility ", self, " is no longer a member in round ", plan.round, ": ",
                       decision.cause, "; it waits for its admission and receives the model");
        restore();
        plan = coordinator_->begin_round();
        break;
    }
  }
}

void FacilityRounds::average(const Placement &placement, void *const *bufs, const size_t *counts, size_t n,
                             xffl_dtype_t dtype) {
  const int facilities = static_cast<int>(link_->sizes().size());
  const size_t size = comm::dtype_size(dtype);
  size_t count = 0;
  for (size_t i = 0; i < n; ++i) count += counts[i];
  const bool device = placement.device_memory;
  void *const stream = device ? placement.stream : nullptr;
  // Device memory (see the file's comment): a crossing rank stages the buffers into one host buffer
  // through a group of one on the main backend (copies on the caller's stream, then waited for, within
  // XFFL_TIMEOUT) and works on it as on host memory; the caller's buffers change only at the end.
  std::unique_ptr<comm::Communicator> copies;
  if (device && placement.crossing) copies = device_copies(placement);
  // One host buffer is worked on in place; several are packed into one (the relay then moves one
  // message), and the caller's buffers change only at the end.
  std::vector<uint8_t> packed;
  auto pack = [&] {
    size_t offset = 0;
    for (size_t i = 0; i < n; ++i) {
      const size_t bytes = counts[i] * size;
      if (bytes && device) copies->copy(packed.data() + offset, bufs[i], bytes, stream);
      if (bytes && !device) std::memcpy(packed.data() + offset, bufs[i], bytes);
      offset += bytes;
    }
    if (device) copies->synchronize(stream);  // the host reads it next
  };
  auto unpack = [&] {
    size_t offset = 0;
    for (size_t i = 0; i < n; ++i) {
      const size_t bytes = counts[i] * size;
      if (bytes && device) copies->copy(bufs[i], packed.data() + offset, bytes, stream);
      if (bytes && !device) std::memcpy(bufs[i], packed.data() + offset, bytes);
      offset += bytes;
    }
    if (device) copies->synchronize(stream);  // the host buffer goes with this call
  };
  const bool host_buffer = device ? placement.crossing : n != 1;
  if (host_buffer) packed.resize(count * size);
  if (!device && n != 1) pack();  // device: staged in below, where a failure reaches the relay group
  uint8_t *work = host_buffer ? packed.data() : static_cast<uint8_t *>(bufs[0]);

  Header header;
  if (placement.crossing) {
    // The input of a redo: on host memory a copy of the one buffer, several packed again from the
    // caller's; on device memory staged again from the caller's buffers, which hold it until the end.
    std::vector<uint8_t> saved;
    if (!device && n == 1) saved.assign(work, work + count * size);
    // Error feedback: this call's residual (one, for the one hop of the packed buffer), and a copy of
    // it as the call found it, put back with the input for a redo (an attempt that failed may have
    // replaced it already, with what it meant to send in a round that did not count).
    federated::wire::ErrorFeedback *feedback =
        placement.error_feedback && placement.wire_format != XFFL_WIRE_F32 && dtype == XFFL_F32
            ? placement.error_feedback
            : nullptr;
    if (feedback) {
      feedback->begin(bufs, counts, n, placement.wire_format);
      feedback->save();
    }
    auto restore_input = [&] {
      if (device || n != 1) {
        pack();
      } else if (!saved.empty()) {
        std::memcpy(work, saved.data(), saved.size());
      }
    };
    auto restore = [&] {
      restore_input();
      if (feedback) feedback->restore();
    };
    Outcome outcome;
    const uint64_t unknown_before = unknown_rounds_;
    try {
      std::chrono::milliseconds reserve{0};
      if (device) {
        const Clock::time_point staging = Clock::now();
        pack();
        reserve = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - staging);
      }
      // Twice the staging: the copy in took it before this point, the copy back takes about as long.
      run_crossing(placement, work, count, dtype, restore, outcome, 2 * reserve);
      header.epoch = outcome.epoch;
      header.round = outcome.round;
      header.live = outcome.contributors;
      if (device) unpack();
    } catch (const Error &error) {
      header.status = error.status();
      header.message = error.what();
    } catch (const std::bad_alloc &) {
      header.status = XFFL_ENOMEM;
      header.message = "federation: out of memory in the federated average";
    } catch (const std::exception &error) {
      header.status = XFFL_EINTERNAL;
      header.message = std::string("federation: ") + error.what();
    }
    // A failed average leaves the caller's input and its residual as they were (device memory is
    // written only once the round succeeded). When its round's outcome is unknown (acked, no
    // decision), the residual the attempt left is set aside first: the next average carries it if the
    // round counted (settle_unknown_round).
    if (header.status != XFFL_OK) {
      if (!device && n == 1) restore_input();
      if (feedback && unknown_rounds_ != unknown_before && !unknown_round_->self_joining) feedback->set_aside();
      if (feedback) feedback->restore();
    }
    if (feedback) feedback->forget_saved();
    if (placement.relay) {
      std::vector<uint8_t> bytes = encode(header, facilities);
      relay_header(placement, bytes, true);
      if (header.status == XFFL_OK) relay_model(placement, bufs, counts, n, work, count, dtype);
    }
    if (header.status != XFFL_OK) throw Error(static_cast<xffl_status_t>(header.status), header.message);
  } else {
    if (!placement.relay) fail(XFFL_EINTERNAL, "federation: a rank that does not cross facilities has no relay group");
    std::vector<uint8_t> bytes(header_bytes(facilities));
    relay_header(placement, bytes, false);
    header = decode(bytes, facilities);
    if (header.status != XFFL_OK)
      fail(static_cast<xffl_status_t>(header.status), "the crossing rank of shard ", placement.shard,
           " of facility ", link_->facility(), " failed the federated average: ", header.message);
    relay_model(placement, bufs, counts, n, work, count, dtype);
  }
  if (!device && n != 1) unpack();
  std::lock_guard<std::mutex> lock(progress_mutex_);
  progress_.epoch = header.epoch;
  progress_.round = header.round;
  progress_.live = std::move(header.live);
}

std::unique_ptr<comm::Communicator> FacilityRounds::device_copies(const Placement &placement) const {
  // A group of one on the main backend (no NCCL communicator: its collectives are device copies), made
  // locally at each call; the crossing groups' tag, which the layout's families never use.
  const int me = link_->global_rank(job_rank_);
  comm::GroupSpec spec{topology::RankList::explicit_ranks({me}), 0,
                       "device staging of shard " + std::to_string(placement.shard) + " for the federated average",
                       kRoundsTag};
  return placement.backend->create_communicator(spec);
}

void FacilityRounds::relay_header(const Placement &placement, std::vector<uint8_t> &bytes, bool root) const {
  comm::Communicator &relay = *placement.relay;
  if (!placement.device_memory) {
    relay.broadcast(bytes.data(), bytes.size(), XFFL_U8, placement.relay_root, nullptr);
    return;
  }
  // The relay group moves device memory: the header goes through device scratch, on the caller's
  // stream, and the copy back to the host is waited for (within XFFL_TIMEOUT) before it is read.
  void *const stream = placement.stream;
  void *scratch = relay.allocate(bytes.size(), stream);
  try {
    if (root) relay.copy(scratch, bytes.data(), bytes.size(), stream);
    relay.broadcast(scratch, bytes.size(), XFFL_U8, placement.relay_root, stream);
    if (!root) relay.copy(bytes.data(), scratch, bytes.size(), stream);
    relay.synchronize(stream);
  } catch (...) {
    relay.release(scratch, stream);
    throw;
  }
  relay.release(scratch, stream);
}

void FacilityRounds::relay_model(const Placement &placement, void *const *bufs, const size_t *counts, size_t n,
                                 uint8_t *work, size_t count, xffl_dtype_t dtype) const {
  comm::Communicator &relay = *placement.relay;
  if (!placement.device_memory) {  // the one buffer, or the packed one
    relay.broadcast(work, count, dtype, placement.relay_root, nullptr);
    return;
  }
  // Device memory: each of the caller's buffers, on the caller's stream (the crossing rank's hold the
  // result already); an empty one is skipped on every rank alike (the counts are the same).
  for (size_t i = 0; i < n; ++i)
    if (counts[i]) relay.broadcast(bufs[i], counts[i], dtype, placement.relay_root, placement.stream);
}

}  // namespace xffl
