#include "federation/epochs.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <numeric>
#include <optional>
#include <sstream>
#include <thread>

#include "common/error.h"
#include "federation/facility_lease.h"

namespace xffl::federation {

// The view key's content: one field a line, "name=value" (cause is free text, last).
namespace {

struct View {
  int64_t epoch = 0;
  int64_t committed = 0;        // the last committed round (0: none yet)
  int64_t committed_epoch = 0;  // the epoch whose members computed it
  bool halted = false;          // below quorum: every member stops with XFFL_EQUORUM
  std::map<int, std::string> members;  // facility -> incarnation
  std::vector<int> joining;            // sorted, a subset of members
  std::string cause;                   // what made this view (for the callers' log)
  int64_t mod_revision = 0;            // of the key as read; 0 when not stored yet
};

std::string join(const std::vector<int> &values) {
  std::string out;
  for (int value : values) out += (out.empty() ? "" : ",") + std::to_string(value);
  return out.empty() ? "none" : out;
}

std::vector<int> facilities_of(const std::map<int, std::string> &members) {
  std::vector<int> out;
  for (const auto &entry : members) out.push_back(entry.first);
  return out;
}

bool contains(const std::vector<int> &values, int value) {
  return std::find(values.begin(), values.end(), value) != values.end();
}

std::string encode(const View &view) {
  std::ostringstream text;
  text << "epoch=" << view.epoch << "\ncommitted=" << view.committed << "\ncommitted_epoch=" << view.committed_epoch
       << "\nhalted=" << (view.halted ? 1 : 0) << "\nmembers=";
  bool first = true;
  for (const auto &[facility, incarnation] : view.members) {
    text << (first ? "" : ",") << facility << ":" << incarnation;
    first = false;
  }
  text << "\njoining=";
  first = true;
  for (int facility : view.joining) {
    text << (first ? "" : ",") << facility;
    first = false;
  }
  text << "\ncause=" << view.cause;
  return text.str();
}

int64_t to_i64(const std::string &text, const std::string &what) {
  size_t used = 0;
  int64_t value = 0;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception &) {
    used = 0;
  }
  if (used == 0 || used != text.size()) fail(XFFL_EPEER, "federation: the view's ", what, " '", text, "' is not a number");
  return value;
}

View decode(const KeyValue &entry) {
  View view;
  view.mod_revision = entry.mod_revision;
  std::istringstream lines(entry.value);
  std::string line;
  while (std::getline(lines, line)) {
    const size_t equals = line.find('=');
    if (equals == std::string::npos) fail(XFFL_EPEER, "federation: the view holds a line without '=': '", line, "'");
    const std::string name = line.substr(0, equals), value = line.substr(equals + 1);
    if (name == "epoch") view.epoch = to_i64(value, name);
    else if (name == "committed") view.committed = to_i64(value, name);
    else if (name == "committed_epoch") view.committed_epoch = to_i64(value, name);
    else if (name == "halted") view.halted = value == "1";
    else if (name == "cause") view.cause = value;
    else if (name == "members" || name == "joining") {
      std::istringstream items(value);
      std::string item;
      while (std::getline(items, item, ',')) {
        if (item.empty()) continue;
        if (name == "joining") {
          view.joining.push_back(static_cast<int>(to_i64(item, "joining facility")));
          continue;
        }
        const size_t colon = item.find(':');
        if (colon == std::string::npos) fail(XFFL_EPEER, "federation: the view's member '", item, "' lacks ':'");
        view.members[static_cast<int>(to_i64(item.substr(0, colon), "member facility"))] = item.substr(colon + 1);
      }
    }
  }
  std::sort(view.joining.begin(), view.joining.end());
  return view;
}

std::string view_key(const std::string &prefix) { return prefix + "live/view"; }
std::string ack_prefix(const std::string &prefix) { return prefix + "live/ack/"; }
std::string ack_key(const std::string &prefix, int facility, int shard) {
  return ack_prefix(prefix) + std::to_string(facility) + "/" + std::to_string(shard);
}
std::string ack_value(int64_t epoch, int64_t round) { return std::to_string(epoch) + " " + std::to_string(round); }

struct Live {
  std::optional<View> view;
  std::map<int, std::string> registered;  // facility -> incarnation, from the member keys
};

// Member keys of facilities outside [0, facilities) (another job's configuration) are ignored.
Live read_live(const std::string &prefix, const Listing &listing, int facilities) {
  Live live;
  const std::string members = prefix + "live/member/";
  for (const KeyValue &entry : listing.entries) {
    if (entry.key == view_key(prefix)) {
      live.view = decode(entry);
    } else if (entry.key.rfind(members, 0) == 0) {
      const int64_t facility = to_i64(entry.key.substr(members.size()), "member key");
      if (facility >= 0 && facility < facilities) live.registered[static_cast<int>(facility)] = entry.value;
    }
  }
  return live;
}

int64_t remaining_ms(Clock::time_point deadline) {
  return std::max<int64_t>(
      0, std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count());
}

}  // namespace

const char *outcome_name(RoundOutcome outcome) {
  switch (outcome) {
    case RoundOutcome::Committed: return "committed";
    case RoundOutcome::Redo: return "redo";
    case RoundOutcome::Evicted: return "evicted";
  }
  return "unknown";
}

RoundCoordinator::RoundCoordinator(std::unique_ptr<MembershipStore> store, CoordinatorConfig config)
    : store_(std::move(store)), config_(std::move(config)) {
  const CoordinatorConfig &c = config_;
  if (!store_) fail(XFFL_EINVAL, "federation: the round coordinator needs a store connection");
  if (c.facilities < 1) fail(XFFL_EINVAL, "federation: ", c.facilities, " facilities; at least 1");
  if (c.facility < 0 || c.facility >= c.facilities)
    fail(XFFL_EINVAL, "federation: facility ", c.facility, " outside [0, ", c.facilities, ")");
  if (c.shards < 1 || c.shard < 0 || c.shard >= c.shards)
    fail(XFFL_EINVAL, "federation: shard ", c.shard, " outside [0, ", c.shards, ")");
  if (c.quorum < 0 || c.quorum > c.facilities)
    fail(XFFL_EINVAL, "federation: quorum ", c.quorum, " outside [0, ", c.facilities, "] (0: a majority)");
  if (!c.weights.empty() && c.weights.size() != static_cast<size_t>(c.facilities))
    fail(XFFL_EINVAL, "federation: ", c.weights.size(), " weights for ", c.facilities, " facilities");
  for (size_t f = 0; f < c.weights.size(); ++f)
    if (!(c.weights[f] > 0)) fail(XFFL_EINVAL, "federation: facility ", f, "'s weight ", c.weights[f], " is not > 0");
  if (c.timeout_ms <= 0) fail(XFFL_EINVAL, "federation: timeout ", c.timeout_ms, " ms must be positive");
  if (config_.quorum == 0) config_.quorum = config_.facilities / 2 + 1;
  if (config_.lease_ttl_seconds <= 0) config_.lease_ttl_seconds = 1;
  contact_ = config_.contact ? config_.contact : std::make_shared<StoreContact>();
  where_ = "federation " + store_->endpoint() + ": " +
           (c.rank >= 0 ? "rank " + std::to_string(c.rank) + " (facility " : "facility ") + std::to_string(c.facility) +
           " shard " + std::to_string(c.shard) + (c.rank >= 0 ? ")" : "");
}

RoundCoordinator::Phase RoundCoordinator::phase(std::string what) const {
  Phase p;
  p.started = Clock::now();
  p.deadline = std::min(p.started + std::chrono::milliseconds(config_.timeout_ms), deadline_);
  p.what = std::move(what);
  return p;
}

void RoundCoordinator::give_up(const Phase &phase) const {
  const auto now = Clock::now();
  auto ms = [&](Clock::time_point since) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(now - since).count();
  };
  const std::optional<Clock::time_point> silent = contact_->silent_since();
  if (silent && ms(*silent) >= config_.lease_ttl_seconds * 1000)
    fail(XFFL_EQUORUM, where_, ": ", phase.what, " after ", ms(phase.started), " ms; awaited ",
         phase.awaited.empty() ? std::string("the store") : phase.awaited, ". The federation's store has not ",
         "answered this rank for ", ms(*silent), " ms (", last_store_error_, "), longer than the lease TTL of ",
         config_.lease_ttl_seconds, " s, so this facility's lease has ended or cannot be renewed: it is out of the ",
         "federation and, cut off, below any quorum, so it stops here and computes no round alone (no split ",
         "brain). Its next average waits for its admission once it reaches the store again");
  fail(XFFL_ETIMEOUT, where_, ": ", phase.what, " after ", ms(phase.started), " ms (the timeout is ",
       config_.timeout_ms, " ms", deadline_ == Clock::time_point::max() ? "" : " for the whole average", "); awaited ",
       phase.awaited.empty() ? std::string("the store") : phase.awaited,
       silent ? "; the store has not answered for " + std::to_string(ms(*silent)) + " ms (" + last_store_error_ + ")"
              : std::string());
}

template <typename Request>
auto RoundCoordinator::ask(const Phase &phase, Request request) -> decltype(request(int64_t{0})) {
  auto pause = std::chrono::milliseconds(20);
  while (true) {
    const int64_t left = remaining_ms(phase.deadline);
    if (left <= 0) give_up(phase);
    store_->set_call_timeout(static_cast<int>(std::min<int64_t>(left, config_.timeout_ms)));
    const auto asked = Clock::now();
    try {
      auto answer = request(left);
      contact_->answered();
      return answer;
    } catch (const Error &error) {
      // No answer (timed out, or the connection failed or was refused): the store or the link is down.
      // Tried again until the deadline: a link back within it loses nothing.
      if (error.status() != XFFL_ETIMEOUT && error.status() != XFFL_ENETWORK) throw;
      contact_->unanswered(asked);
      last_store_error_ = error.what();
    }
    const int64_t after = remaining_ms(phase.deadline);
    if (after <= 0) give_up(phase);
    std::this_thread::sleep_for(std::min(pause, std::chrono::milliseconds(after)));
    pause = std::min(pause * 2, std::chrono::milliseconds(500));
  }
}

// A wait on live/ that ends by the phase's deadline: the server holds it at most wait_ms, and at least
// min(1 s, half of what is left) remains for its answer.
std::optional<Listing> RoundCoordinator::wait_live(const Phase &phase, const Listing &since, int64_t wait_ms) {
  const std::string prefix = config_.prefix + "live/";
  return ask(phase, [&](int64_t left) {
    const int64_t answer = std::min<int64_t>(1000, left / 2);
    const int64_t wait = std::max<int64_t>(0, std::min(wait_ms, left - answer));
    store_->set_call_timeout(static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(left - wait, config_.timeout_ms))));
    return store_->wait_for_change(prefix, since, static_cast<int>(wait));
  });
}

void RoundCoordinator::check_plan(const RoundPlan &plan) const {
  if (plan.epoch <= 0 || plan.round <= 0 || !contains(plan.members, config_.facility))
    fail(XFFL_EINVAL, where_, ": the plan of epoch ", plan.epoch, " round ", plan.round, " (members ",
         join(plan.members), ") is not one begin_round gave this facility");
}

namespace {

// The plan of the view's next round, as the crossing rank of `shard` of `facility` sees it.
RoundPlan plan_of(const View &view, const CoordinatorConfig &config) {
  RoundPlan plan;
  plan.epoch = view.epoch;
  plan.round = view.committed + 1;
  plan.members = facilities_of(view.members);
  plan.joining = view.joining;
  for (int f : plan.members)
    if (!contains(plan.joining, f)) plan.contributors.push_back(f);
  plan.weights.assign(static_cast<size_t>(config.facilities), 0.0);
  double total = 0;
  auto weight = [&](int f) { return config.weights.empty() ? 1.0 : config.weights[static_cast<size_t>(f)]; };
  for (int f : plan.contributors) total += weight(f);
  for (int f : plan.contributors) plan.weights[static_cast<size_t>(f)] = weight(f) / total;
  // Joiner j (in order) gets this shard from contributor (shard + j) mod count: the load spreads over
  // shards and contributors, and every rank computes the same pairs.
  for (size_t j = 0; j < plan.joining.size() && !plan.contributors.empty(); ++j)
    plan.heal.push_back({plan.joining[j],
                         plan.contributors[(static_cast<size_t>(config.shard) + j) % plan.contributors.size()]});
  plan.self_joining = contains(plan.joining, config.facility);
  plan.incarnations = view.members;
  auto self = view.members.find(config.facility);
  if (self != view.members.end()) plan.incarnation = self->second;
  return plan;
}

// The view after a commit of `round` (commit) or after the loss of `reported` facilities. Members
// whose lease ended are dropped, members that restarted (another incarnation) are dropped and admitted
// again, registered facilities outside the view are admitted (joining), except the reported ones.
// nullopt when a failure report changes nothing.
std::optional<View> next_view(const View &view, const std::map<int, std::string> &registered,
                              const std::vector<int> &reported, const std::string &reported_cause, bool commit,
                              int64_t round, int quorum) {
  View next;
  std::vector<std::string> causes;
  for (const auto &[facility, incarnation] : view.members) {
    auto live = registered.find(facility);
    if (contains(reported, facility))
      causes.push_back("facility " + std::to_string(facility) + " lost: " + reported_cause);
    else if (live == registered.end())
      causes.push_back("facility " + std::to_string(facility) + " lost: its lease ended");
    else if (live->second != incarnation)
      causes.push_back("facility " + std::to_string(facility) + " lost: it restarted (incarnation " + incarnation +
                       " replaced by " + live->second + ")");
    else
      next.members[facility] = incarnation;
  }
  if (!commit)
    for (int f : view.joining)
      if (next.members.count(f)) next.joining.push_back(f);
  for (const auto &[facility, incarnation] : registered) {
    if (next.members.count(facility) || contains(reported, facility)) continue;
    next.members[facility] = incarnation;
    next.joining.push_back(facility);
    causes.push_back("facility " + std::to_string(facility) + " admitted (incarnation " + incarnation + ")");
  }
  std::sort(next.joining.begin(), next.joining.end());
  const bool changed = next.members != view.members;
  if (!commit && !changed) return std::nullopt;
  next.epoch = view.epoch + (changed ? 1 : 0);
  next.committed = commit ? round : view.committed;
  next.committed_epoch = commit ? view.epoch : view.committed_epoch;
  const size_t contributors = next.members.size() - next.joining.size();
  next.halted = view.halted || static_cast<int>(next.members.size()) < quorum || contributors == 0;
  std::ostringstream cause;
  if (commit) cause << "round " << round << " committed in epoch " << view.epoch;
  for (const std::string &text : causes) cause << (cause.tellp() > 0 ? "; " : "") << text;
  if (changed)
    cause << "; epoch " << view.epoch << " (facilities " << join(facilities_of(view.members)) << ") became epoch "
          << next.epoch << " (facilities " << join(facilities_of(next.members)) << ", joining " << join(next.joining)
          << ")";
  if (next.halted && !view.halted)
    cause << "; below the quorum of " << quorum << " facilities"
          << (contributors == 0 ? " (no facility holds the model)" : "") << ": the federation stops";
  next.cause = cause.str();
  if (view.halted) next.cause = view.cause;
  return next;
}

}  // namespace

std::string round_still_current(const std::string &prefix, int facilities, const RoundPlan &plan,
                                const Listing &listing) {
  Live live = read_live(prefix, listing, facilities);
  if (!live.view) return "the view key disappeared from the store";
  const View &view = *live.view;
  if (view.committed_epoch == plan.epoch && view.committed >= plan.round) return "";  // decided: nothing to end
  if (view.halted) return "the federation halted in epoch " + std::to_string(view.epoch) + ": " + view.cause;
  if (view.epoch != plan.epoch)
    return "round " + std::to_string(plan.round) + " moved from epoch " + std::to_string(plan.epoch) + " to epoch " +
           std::to_string(view.epoch) + ": " + view.cause;
  for (const auto &[facility, incarnation] : plan.incarnations) {
    auto found = live.registered.find(facility);
    if (found == live.registered.end())
      return "facility " + std::to_string(facility) + " lost: its lease in the federation's store ended (no member key)";
    if (found->second != incarnation)
      return "facility " + std::to_string(facility) + " lost: it registered again (incarnation " + incarnation +
             " replaced by " + found->second + ")";
  }
  return "";
}

RoundPlan RoundCoordinator::begin_round() {
  Phase phase = this->phase("no round to begin");
  const std::string prefix = config_.prefix + "live/";
  auto list_live = [&] { return ask(phase, [&](int64_t) { return store_->list(prefix); }); };
  // The view the last decision carried, while young: no request (epochs.h, "Store operations").
  Listing listing;
  if (decided_ && phase.started - decided_at_ < std::chrono::milliseconds(kReuseViewMs)) listing = std::move(*decided_);
  else listing = list_live();
  decided_.reset();
  while (true) {
    Live live = read_live(config_.prefix, listing, config_.facilities);
    if (!live.view) {
      std::vector<int> missing;
      for (int f = 0; f < config_.facilities; ++f)
        if (!live.registered.count(f)) missing.push_back(f);
      if (missing.empty()) {
        View first;
        first.epoch = 1;
        first.members = live.registered;
        first.cause = "epoch 1 formed by facilities " + join(facilities_of(first.members));
        ask(phase, [&](int64_t) {  // one former wins; all read it
          return store_->compare_and_swap(view_key(config_.prefix), 0, encode(first));
        });
        listing = list_live();
        continue;
      }
      phase.awaited = "every facility to register before the first epoch (missing: facilities " + join(missing) + ")";
    } else if (live.view->halted) {
      fail(XFFL_EQUORUM, where_, ": the federation halted in epoch ", live.view->epoch, " after round ",
           live.view->committed, ": ", live.view->cause);
    } else {
      auto self = live.registered.find(config_.facility);
      auto member = live.view->members.find(config_.facility);
      if (self != live.registered.end() && member != live.view->members.end() && member->second == self->second) {
        return plan_of(*live.view, config_);
      }
      phase.awaited = "the admission of this facility (" +
                      (self == live.registered.end() ? std::string("not registered: its lease holder registers it again")
                                                     : "incarnation " + self->second) +
                      ") at a round boundary; epoch " + std::to_string(live.view->epoch) + ", last committed round " +
                      std::to_string(live.view->committed);
    }
    std::optional<Listing> changed = wait_live(phase, listing, remaining_ms(phase.deadline));
    if (changed) listing = std::move(*changed);
  }
}

RoundDecision RoundCoordinator::commit_round(const RoundPlan &plan) {
  check_plan(plan);
  Phase phase = this->phase("round " + std::to_string(plan.round) + " of epoch " + std::to_string(plan.epoch) +
                            " not acknowledged");
  phase.awaited = "the store's answer to this rank's acknowledgement";
  // The ack's answer is not waited for: await_decision's listing, on the same connection, is answered
  // after the store applied it, and an ack that listing does not show (the put failed, or found no
  // connection to go on) is put again there, answered. So the ack and the listing are one round trip.
  ask(phase, [&](int64_t) {
    store_->put_unanswered(ack_key(config_.prefix, config_.facility, config_.shard), ack_value(plan.epoch, plan.round));
    return 0;
  });
  return await_decision(plan, true, "");
}

RoundDecision RoundCoordinator::fail_round(const RoundPlan &plan, const std::vector<int> &lost,
                                           const std::string &cause) {
  check_plan(plan);
  for (int f : lost)
    if (f < 0 || f >= config_.facilities)
      fail(XFFL_EINVAL, where_, ": lost facility ", f, " outside [0, ", config_.facilities, ")");
  if (!lost.empty()) {
    Phase phase = this->phase("the loss of facilities " + join(lost) + " in round " + std::to_string(plan.round) +
                              " not reported");
    phase.awaited = "the view, to report the loss (" + cause + ")";
    Live live = read_live(config_.prefix, ask(phase, [&](int64_t) { return store_->list(config_.prefix + "live/"); }),
                          config_.facilities);
    // Only while the round is undecided in the plan's epoch: otherwise someone decided already.
    if (live.view && !live.view->halted && live.view->epoch == plan.epoch && live.view->committed < plan.round) {
      std::optional<View> next = next_view(*live.view, live.registered, lost,
                                           cause + " (reported by facility " + std::to_string(config_.facility) +
                                               " shard " + std::to_string(config_.shard) + ")",
                                           false, 0, config_.quorum);
      if (next)
        ask(phase, [&](int64_t) {
          return store_->compare_and_swap(view_key(config_.prefix), live.view->mod_revision, encode(*next));
        });
    }
  }
  return await_decision(plan, false, cause);
}

RoundDecision RoundCoordinator::await_round(const RoundPlan &plan) {
  check_plan(plan);
  return await_decision(plan, true, "");
}

RoundPlan RoundCoordinator::begin_round_receiving(const std::string &cause) {
  while (true) {
    RoundPlan plan = begin_round();
    if (plan.self_joining || plan.contributors.size() <= 1) return plan;
    Phase phase = this->phase("the readmission of facility " + std::to_string(config_.facility) +
                              " to receive the model in round " + std::to_string(plan.round));
    phase.awaited = "the view, to mark this facility joining (" + cause + ")";
    Listing listing = ask(phase, [&](int64_t) { return store_->list(config_.prefix + "live/"); });
    Live live = read_live(config_.prefix, listing, config_.facilities);
    // Plan again when the view is not the one planned from (another rank moved it meanwhile).
    if (!live.view || live.view->halted || live.view->epoch != plan.epoch || live.view->committed + 1 != plan.round)
      continue;
    View next = *live.view;
    next.epoch = live.view->epoch + 1;
    if (!contains(next.joining, config_.facility)) next.joining.push_back(config_.facility);
    std::sort(next.joining.begin(), next.joining.end());
    next.cause = "facility " + std::to_string(config_.facility) + " receives the model again: " + cause + "; epoch " +
                 std::to_string(live.view->epoch) + " became epoch " + std::to_string(next.epoch) + " (facilities " +
                 join(facilities_of(next.members)) + ", joining " + join(next.joining) + ")";
    ask(phase, [&](int64_t) {
      return store_->compare_and_swap(view_key(config_.prefix), live.view->mod_revision, encode(next));
    });
    // Won or lost, the next begin_round reads the view as it is now.
  }
}

RoundDecision RoundCoordinator::await_decision(const RoundPlan &plan, bool acked, const std::string &failure) {
  const std::string prefix = config_.prefix + "live/";
  const std::string round_text = "round " + std::to_string(plan.round) + " of epoch " + std::to_string(plan.epoch);
  Phase phase = this->phase(round_text + " undecided");
  phase.awaited = "the round's decision" + (failure.empty() ? std::string() : " after this rank's part failed (" +
                                                                                   failure + ")");
  // One listing holds the view, the member keys and the acks (all under live/), read after this rank's
  // ack: it sees every ack put before it, and every later change wakes the wait below.
  Listing listing = ask(phase, [&](int64_t) { return store_->list(prefix); });
  while (true) {
    Live live = read_live(config_.prefix, listing, config_.facilities);
    if (!live.view) fail(XFFL_EPEER, where_, ": ", round_text, ": the view key disappeared from the store");
    const View &view = *live.view;
    // 1. Decided: committed in the plan's epoch (whatever came after), halted, evicted, or redone.
    if (view.committed_epoch == plan.epoch && view.committed >= plan.round) {
      RoundDecision decision{RoundOutcome::Committed, plan, view.cause};
      decided_ = std::move(listing);
      decided_at_ = Clock::now();
      return decision;
    }
    if (view.halted)
      fail(XFFL_EQUORUM, where_, ": ", round_text, " not committed: the federation halted in epoch ", view.epoch,
           ": ", view.cause);
    auto self = view.members.find(config_.facility);
    if (self == view.members.end() || self->second != plan.incarnation)
      return {RoundOutcome::Evicted, plan_of(view, config_), view.cause};
    if (view.epoch != plan.epoch) {
      RoundPlan next = plan_of(view, config_);
      if (next.round != plan.round)
        fail(XFFL_EINTERNAL, where_, ": ", round_text, " undecided, yet the view of epoch ", view.epoch,
             " is at round ", next.round);
      return {RoundOutcome::Redo, next, view.cause};
    }
    // 2. Undecided in the plan's epoch: commit when every ack is there, or drop the lost facilities.
    std::map<std::string, std::string> ack_values;
    const std::string acks = ack_prefix(config_.prefix);
    for (const KeyValue &entry : listing.entries)
      if (entry.key.compare(0, acks.size(), acks) == 0) ack_values[entry.key] = entry.value;
    std::vector<std::string> missing;
    const std::string wanted = ack_value(plan.epoch, plan.round);
    // This rank's ack overwritten by a delayed put of an earlier round (epochs.h, "Keys"): put again,
    // or the round would wait for it until the timeout and every member would fail.
    const std::string own = ack_key(config_.prefix, config_.facility, config_.shard);
    if (acked && ack_values[own] != wanted) {
      ask(phase, [&](int64_t) { return store_->put(own, wanted); });
      ack_values[own] = wanted;
    }
    for (const auto &member : view.members) {
      std::vector<int> shards;
      for (int s = 0; s < config_.shards; ++s) {
        auto found = ack_values.find(ack_key(config_.prefix, member.first, s));
        if (found == ack_values.end() || found->second != wanted) shards.push_back(s);
      }
      if (!shards.empty())
        missing.push_back("facility " + std::to_string(member.first) + " shards " + join(shards));
    }
    std::optional<View> next;
    if (missing.empty()) {
      next = next_view(view, live.registered, {}, "", true, plan.round, config_.quorum);
    } else {
      std::vector<int> lost;
      for (const auto &[facility, incarnation] : view.members) {
        auto found = live.registered.find(facility);
        if (found == live.registered.end() || found->second != incarnation) lost.push_back(facility);
      }
      if (!lost.empty()) next = next_view(view, live.registered, {}, "", false, 0, config_.quorum);
    }
    if (next && missing.empty() && next->epoch == view.epoch && next->members == view.members &&
        next->halted == view.halted) {
      // Every ack is in and the commit changes no membership: the round is committed whoever swaps the
      // view, and the new view is the same bytes whoever writes it (next_view of the same view), so this
      // rank does not wait for the store's answer (the swap is applied before its next request).
      const std::string value = encode(*next);
      try {
        store_->set_call_timeout(static_cast<int>(std::max<int64_t>(1, remaining_ms(phase.deadline))));
        store_->compare_and_swap_unanswered(view_key(config_.prefix), view.mod_revision, value);
      } catch (const Error &) {
        // Not needed for the decision: another rank's swap, or the next round's, advances the view.
      }
      for (KeyValue &entry : listing.entries)
        if (entry.key == view_key(config_.prefix)) {
          entry.value = value;
          entry.mod_revision = 0;  // not known: nothing swaps against this listing (a fresh one first)
        }
      decided_ = std::move(listing);
      decided_at_ = Clock::now();
      return {RoundOutcome::Committed, plan, next->cause};
    }
    if (next) {
      const std::string value = encode(*next);
      const CasResult swapped =
          ask(phase, [&](int64_t) { return store_->compare_and_swap(view_key(config_.prefix), view.mod_revision, value); });
      // The answer carries the view as it is now (ours, or the winner's): no list. The listing keeps its
      // revision, so a later wait on it sees every change since, the members' included.
      KeyValue now;
      if (swapped.succeeded) {
        now.key = view_key(config_.prefix);
        now.value = value;
        now.mod_revision = swapped.revision;
      } else if (swapped.current) {
        now = *swapped.current;
      } else {
        listing = ask(phase, [&](int64_t) { return store_->list(prefix); });
        continue;
      }
      for (KeyValue &entry : listing.entries)
        if (entry.key == now.key) entry = now;
      continue;
    }
    {
      std::string awaited;
      for (const std::string &text : missing) awaited += (awaited.empty() ? "" : "; ") + text;
      phase.awaited = "the acks of " + awaited + " (their leases are alive)" +
                      (failure.empty() ? std::string() : "; this rank's part failed: " + failure);
    }
    // An ack, a member key or the view wakes us (a lease's end included).
    std::optional<Listing> changed =
        wait_live(phase, listing, std::min<int64_t>(remaining_ms(phase.deadline), config_.lease_ttl_seconds * 1000));
    if (changed) listing = std::move(*changed);
  }
}

}  // namespace xffl::federation
