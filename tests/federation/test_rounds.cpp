// The round protocol (src/federation/epochs.h) with facilities as separate processes, one test body for
// both stores (argv[1]: "xffl" starts tools/xffl-federation, "etcd" a 3-member etcd cluster; exit 77
// when etcd is not installed).
//
// A simulated facility is a process group: a leader (its rank 0) holds the FacilityLease, and one
// child per shard plays that shard's crossing rank with its own RoundCoordinator. The "all-reduce" of
// a shard goes through the store: each contributor puts its contribution under
// test/data/<epoch>/<round>/<shard>/<facility> and reads the others'; a contributor whose member key is
// gone is reported lost (a transport error), and a view that moved on makes the exchange stale. The
// heal transfer to a joining facility also goes through the store, sealed with model_seal.
//
// Contribution of facility f to shard s in round r: model(r-1, s) + (f + 1) / 4 + r; the committed
// model is the weighted mean over that round's contributors. Every process writes what it decided to
// a file; the parent checks that every round's result is exactly that mean over the epoch it was
// committed in, identical in every process and every shard (one epoch per round for all shards).
//
// The parent paces the rounds with a gate key (test/gate): a shard begins round r only once the gate
// is >= r, so faults land between or inside chosen rounds, with no timing thresholds.
#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "backends.h"
#include "federation/endpoint.h"
#include "federation/epochs.h"
#include "federation/facility_lease.h"
#include "federation/membership_store.h"
#include "federation/model_seal.h"
#include "bootstrap_test.h"  // last: cmocka's fail() macro

using bootstrap_test::expect_failure;
using bootstrap_test::outcome_of;
using namespace xffl::federation;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int kTimeoutMs = 20000;  // XFFL_TIMEOUT of the simulated jobs
constexpr int64_t kTtl = 2;        // lease TTL, seconds
constexpr const char *kJobId = "rounds-test";
std::unique_ptr<federation_test::Backend> backend;
std::string backend_name;

std::unique_ptr<MembershipStore> connect_store() {
  return connect_membership_store(parse_endpoint(backend->endpoint(), "the test's endpoint"), federation_test::kSecret,
                                  kTimeoutMs);
}

// What a scenario injects, and where.
struct Scenario {
  std::string name;  // also the key prefix and the record folder
  int facilities = 3;
  int shards = 2;
  int rounds = 4;
  std::vector<double> weights;  // empty: equal
  int partial_ack_facility = -1;  // its shard 1 dies (with its whole facility) once its shard 0 acked...
  int partial_ack_round = -1;     // ...this round
  int cut_round = -1;             // in this round every facility reports every other one lost
  int stale_ack_round = -1;       // in this round the last shard of the last facility, before it acks,
                                  // overwrites facility 0 shard 0's ack with the previous round's
  int unknown_facility = -1;      // its shards' commit_round ends at a short deadline after their ack,
  int unknown_round = -1;         // in this round, before the others ack (they wait for it): the
                                  // outcome is unknown to it until its next call (await_round)
};

Scenario scenario_of(const std::string &name, int facilities, int shards, int rounds) {
  Scenario scenario;
  scenario.name = name;
  scenario.facilities = facilities;
  scenario.shards = shards;
  scenario.rounds = rounds;
  return scenario;
}

std::string prefix_of(const Scenario &scenario) { return federation_prefix(std::string(kJobId) + "-" + scenario.name); }
std::string records_root;  // the parent's folder for this run, set once in main (children share it)
std::string record_dir(const Scenario &scenario) { return records_root + "-" + scenario.name; }

// A forked process must die of its faults, not return into cmocka's runner through its handlers.
void default_fault_signals() {
  for (int signal_number : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT}) ::signal(signal_number, SIG_DFL);
}

std::string hex_of(double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%a", value);
  return text;
}

std::string csv(const std::vector<int> &values) {
  std::string out;
  for (int v : values) out += (out.empty() ? "" : ",") + std::to_string(v);
  return out.empty() ? "-" : out;
}

// The mean the test expects, in the one order every process uses (contributors ascending).
double mean_of(const std::vector<int> &contributors, const std::vector<double> &weights, double previous, int64_t round) {
  double total = 0;
  for (int f : contributors) total += weights.empty() ? 1.0 : weights[static_cast<size_t>(f)];
  double sum = 0;
  for (int f : contributors) {
    double w = (weights.empty() ? 1.0 : weights[static_cast<size_t>(f)]) / total;
    sum += w * (previous + (f + 1) * 0.25 + static_cast<double>(round));
  }
  return sum;
}

double initial_model(int shard) { return 1.0 + shard; }

// The view's field as the parent reads it (epochs.h documents the layout); "" when absent.
std::string view_field(MembershipStore &store, const std::string &prefix, const std::string &name) {
  std::optional<KeyValue> view = store.get(prefix + "live/view");
  if (!view) return "";
  std::istringstream lines(view->value);
  std::string line;
  while (std::getline(lines, line))
    if (line.rfind(name + "=", 0) == 0) return line.substr(name.size() + 1);
  return "";
}

int64_t committed_round(MembershipStore &store, const std::string &prefix) {
  std::string text = view_field(store, prefix, "committed");
  return text.empty() ? 0 : std::stoll(text);
}

void set_gate(MembershipStore &store, const std::string &prefix, int64_t round) {
  store.put(prefix + "test/gate", std::to_string(round));
}

// ----- the simulated crossing rank -----

struct Exchange {
  enum Kind { Done, Lost, Stale } kind = Done;
  double value = 0;
  std::vector<int> lost;
  std::string why;
};

class ShardRank {
 public:
  ShardRank(const Scenario &scenario, int facility, int shard, FILE *record)
      : scenario_(scenario), facility_(facility), shard_(shard), record_(record), prefix_(prefix_of(scenario)),
        store_(connect_store()) {}

  int run() {
    CoordinatorConfig config;
    config.prefix = prefix_;
    config.facility = facility_;
    config.facilities = scenario_.facilities;
    config.shard = shard_;
    config.shards = scenario_.shards;
    config.weights = scenario_.weights;
    config.timeout_ms = kTimeoutMs;
    config.lease_ttl_seconds = kTtl;
    RoundCoordinator coordinator(connect_store(), config);
    double model = initial_model(shard_);
    RoundPlan plan = coordinator.begin_round();
    std::fprintf(record_, "begin %lld %lld %d\n", static_cast<long long>(plan.round), static_cast<long long>(plan.epoch),
                 plan.self_joining ? 1 : 0);
    while (plan.round <= scenario_.rounds) {
      wait_gate(plan.round);
      Exchange result = exchange(plan, model);
      if (plan.round == scenario_.stale_ack_round && facility_ == scenario_.facilities - 1 &&
          shard_ == scenario_.shards - 1)
        overwrite_first_ack(plan);
      if (result.kind == Exchange::Done && plan.round == scenario_.unknown_round) {
        if (facility_ == scenario_.unknown_facility) {
          // The average fails after the ack: the caller gets its input back (model unchanged). Its
          // next call learns the decision first, then receives the model when the round counted.
          if (commit_without_decision(coordinator, plan)) {
            RoundDecision decision = coordinator.await_round(plan);
            std::fprintf(record_, "unknown %lld %lld: %s\n", static_cast<long long>(plan.round),
                         static_cast<long long>(plan.epoch), outcome_name(decision.outcome));
            std::fflush(record_);
            if (decision.outcome != RoundOutcome::Committed) (xffl::fail)(XFFL_EINTERNAL, "expected committed");
            plan = coordinator.begin_round_receiving("its average of round " + std::to_string(plan.round) +
                                                     " ended without the decision");
            std::fprintf(record_, "begin %lld %lld %d\n", static_cast<long long>(plan.round),
                         static_cast<long long>(plan.epoch), plan.self_joining ? 1 : 0);
            std::fflush(record_);
            continue;
          }
        } else {
          wait_keys(prefix_ + "test/unknown/", scenario_.shards);
        }
      }
      RoundDecision decision = result.kind == Exchange::Done ? coordinator.commit_round(plan)
                                                              : coordinator.fail_round(plan, result.lost, result.why);
      switch (decision.outcome) {
        case RoundOutcome::Committed:
          model = result.value;
          std::fprintf(record_, "commit %lld %lld %s %s %s\n", static_cast<long long>(plan.round),
                       static_cast<long long>(plan.epoch), csv(plan.contributors).c_str(), csv(plan.joining).c_str(),
                       hex_of(model).c_str());
          std::fflush(record_);
          plan = coordinator.begin_round();
          if (plan.self_joining)
            std::fprintf(record_, "begin %lld %lld 1\n", static_cast<long long>(plan.round),
                         static_cast<long long>(plan.epoch));
          break;
        case RoundOutcome::Redo:
          std::fprintf(record_, "redo %lld %lld -> %lld\n", static_cast<long long>(plan.round),
                       static_cast<long long>(plan.epoch), static_cast<long long>(decision.plan.epoch));
          plan = decision.plan;  // the model (the round's input) is unchanged: redo from it
          break;
        case RoundOutcome::Evicted:
          std::fprintf(record_, "evicted %lld %lld\n", static_cast<long long>(plan.round),
                       static_cast<long long>(plan.epoch));
          std::fflush(record_);
          plan = coordinator.begin_round();  // waits for the admission: then it receives the model
          std::fprintf(record_, "begin %lld %lld %d\n", static_cast<long long>(plan.round),
                       static_cast<long long>(plan.epoch), plan.self_joining ? 1 : 0);
          break;
      }
      std::fflush(record_);
    }
    return 0;
  }

 private:
  std::string data_prefix(const RoundPlan &plan) const {
    return prefix_ + "test/data/" + std::to_string(plan.epoch) + "/" + std::to_string(plan.round) + "/" +
           std::to_string(shard_) + "/";
  }
  std::string heal_key(const RoundPlan &plan, int joiner) const {
    return prefix_ + "test/heal/" + std::to_string(plan.epoch) + "/" + std::to_string(plan.round) + "/" +
           std::to_string(shard_) + "/" + std::to_string(joiner);
  }

  // What a delayed put of an earlier round does to facility 0 shard 0's ack (epochs.h, "Keys": P
  // ack/<facility>/<shard> = "E R"), once that ack is there and before this rank's completes the set.
  void overwrite_first_ack(const RoundPlan &plan) {
    const std::string key = prefix_ + "live/ack/0/0";
    const std::string acked = std::to_string(plan.epoch) + " " + std::to_string(plan.round);
    auto deadline = Clock::now() + std::chrono::milliseconds(kTimeoutMs);
    for (std::optional<KeyValue> ack = store_->get(key); !ack || ack->value != acked; ack = store_->get(key)) {
      if (Clock::now() > deadline) (xffl::fail)(XFFL_ETIMEOUT, "facility 0 shard 0 did not ack round ", plan.round);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    store_->put(key, std::to_string(plan.epoch) + " " + std::to_string(plan.round - 1));
  }

  // commit_round with a deadline that ends its wait for the decision (the others hold their acks
  // until every shard of this facility is past it): true when it threw after its ack was put.
  bool commit_without_decision(RoundCoordinator &coordinator, const RoundPlan &plan) {
    coordinator.set_deadline(Clock::now() + std::chrono::milliseconds(300));
    bool threw = false;
    try {
      coordinator.commit_round(plan);
    } catch (const xffl::Error &error) {
      threw = true;
      std::fprintf(record_, "no-decision %lld %d\n", static_cast<long long>(plan.round), static_cast<int>(error.status()));
    }
    coordinator.set_deadline(Clock::time_point::max());
    const std::optional<KeyValue> ack = store_->get(prefix_ + "live/ack/" + std::to_string(facility_) + "/" +
                                                    std::to_string(shard_));
    const bool acked = ack && ack->value == std::to_string(plan.epoch) + " " + std::to_string(plan.round);
    store_->put(prefix_ + "test/unknown/" + std::to_string(shard_), "1");
    if (!threw || !acked) (xffl::fail)(XFFL_EINTERNAL, "round ", plan.round, ": commit_round ", threw ? "threw" : "returned",
                                       acked ? " after" : " before", " its ack");
    return true;
  }

  // Waits until `count` keys are under `prefix`.
  void wait_keys(const std::string &prefix, int count) {
    auto deadline = Clock::now() + std::chrono::milliseconds(kTimeoutMs);
    Listing listing = store_->list(prefix);
    while (static_cast<int>(listing.entries.size()) < count) {
      if (Clock::now() > deadline) (xffl::fail)(XFFL_ETIMEOUT, "the keys under ", prefix, " did not come");
      std::optional<Listing> changed = store_->wait_for_change(prefix, listing, 2000);
      if (changed) listing = *changed;
    }
  }

  void wait_gate(int64_t round) {
    auto deadline = Clock::now() + std::chrono::milliseconds(kTimeoutMs * 3);
    Listing listing = store_->list(prefix_ + "test/gate");
    while (true) {
      for (const KeyValue &entry : listing.entries)
        if (std::stoll(entry.value) >= round) return;
      if (Clock::now() > deadline) (xffl::fail)(XFFL_ETIMEOUT, "the gate of round ", round, " did not open");
      std::optional<Listing> changed = store_->wait_for_change(prefix_ + "test/gate", listing, 2000);
      if (changed) listing = *changed;
    }
  }

  // Stale when the view is no longer the plan's epoch (the others went on) or halted; lost when a
  // facility we wait for has no member key.
  bool stale(const Listing &all, const RoundPlan &plan, std::map<int, std::string> &members) const {
    members.clear();
    bool moved = false;
    for (const KeyValue &entry : all.entries) {
      if (entry.key == prefix_ + "live/view") {
        moved = entry.value.find("epoch=" + std::to_string(plan.epoch) + "\n") != 0 ||
                entry.value.find("halted=1") != std::string::npos;
      } else if (entry.key.rfind(prefix_ + "live/member/", 0) == 0) {
        members[std::stoi(entry.key.substr(prefix_.size() + 12))] = entry.value;
      }
    }
    return moved;
  }

  Exchange exchange(const RoundPlan &plan, double model) {
    Exchange out;
    if (plan.round == scenario_.cut_round) {
      out.kind = Exchange::Lost;
      for (int f : plan.members)
        if (f != facility_) out.lost.push_back(f);
      out.why = "the link is cut";
      return out;
    }
    const bool contributing = !plan.self_joining;
    if (contributing)
      store_->put(data_prefix(plan) + std::to_string(facility_),
                  hex_of(model + (facility_ + 1) * 0.25 + static_cast<double>(plan.round)));
    auto deadline = Clock::now() + std::chrono::milliseconds(kTimeoutMs * 2);
    Listing all = store_->list(prefix_);
    while (true) {
      std::map<int, std::string> members;
      if (stale(all, plan, members)) {
        out.kind = Exchange::Stale;
        out.why = "the view moved past epoch " + std::to_string(plan.epoch);
        return out;
      }
      std::map<std::string, std::string> values;
      for (const KeyValue &entry : all.entries) values[entry.key] = entry.value;
      std::vector<int> waiting;
      if (contributing) {
        for (int f : plan.contributors)
          if (!values.count(data_prefix(plan) + std::to_string(f))) waiting.push_back(f);
        if (waiting.empty()) {
          double total = 0, sum = 0;
          for (int f : plan.contributors) total += scenario_.weights.empty() ? 1.0 : scenario_.weights[static_cast<size_t>(f)];
          for (int f : plan.contributors) {
            double w = (scenario_.weights.empty() ? 1.0 : scenario_.weights[static_cast<size_t>(f)]) / total;
            sum += w * std::strtod(values[data_prefix(plan) + std::to_string(f)].c_str(), nullptr);
          }
          out.value = sum;
          heal_and_maybe_die(plan, sum);
          return out;
        }
      } else {
        int sender = -1;
        for (const HealTransfer &heal : plan.heal)
          if (heal.joiner == facility_) sender = heal.sender;
        auto found = values.find(heal_key(plan, facility_));
        if (found != values.end()) {
          // "<%a value> <64 hex digits of the seal>"
          std::istringstream fields(found->second);
          std::string value_text, seal_text;
          fields >> value_text >> seal_text;
          double value = std::strtod(value_text.c_str(), nullptr);
          Seal seal{};
          for (size_t i = 0; i < seal.size(); ++i) seal[i] = static_cast<uint8_t>(std::stoi(seal_text.substr(2 * i, 2), nullptr, 16));
          verify_model_seal(federation_test::kSecret, kJobId, {plan.epoch, plan.round, shard_, sender, facility_},
                            &value, sizeof value, seal);
          out.value = value;
          return out;
        }
        waiting.push_back(sender);
      }
      for (int f : waiting)
        if (!members.count(f)) {
          out.kind = Exchange::Lost;
          out.lost = {f};
          out.why = "facility " + std::to_string(f) + " stopped answering";
          return out;
        }
      if (Clock::now() > deadline) (xffl::fail)(XFFL_ETIMEOUT, "the exchange of round ", plan.round, " hung");
      std::optional<Listing> changed = store_->wait_for_change(prefix_, all, 2000);
      if (changed) all = *changed;
    }
  }

  void heal_and_maybe_die(const RoundPlan &plan, double value) {
    for (const HealTransfer &heal : plan.heal) {
      if (heal.sender != facility_) continue;
      Seal seal = seal_model(federation_test::kSecret, kJobId, {plan.epoch, plan.round, shard_, facility_, heal.joiner},
                             &value, sizeof value);
      std::string text = hex_of(value) + " ";
      for (uint8_t byte : seal) {
        char two[3];
        std::snprintf(two, sizeof two, "%02x", byte);
        text += two;
      }
      store_->put(heal_key(plan, heal.joiner), text);
    }
    if (facility_ == scenario_.partial_ack_facility && plan.round == scenario_.partial_ack_round && shard_ == 1) {
      // Die with the whole facility once shard 0 acked this round and before this shard does.
      const std::string ack = prefix_ + "live/ack/" + std::to_string(facility_) + "/0";
      const std::string wanted = std::to_string(plan.epoch) + " " + std::to_string(plan.round);
      auto deadline = Clock::now() + std::chrono::milliseconds(kTimeoutMs);
      while (Clock::now() < deadline) {
        std::optional<KeyValue> entry = store_->get(ack);
        if (entry && entry->value == wanted) {
          std::fprintf(record_, "dying after shard 0 acked round %lld\n", static_cast<long long>(plan.round));
          std::fflush(record_);
          ::kill(0, SIGKILL);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    }
  }

  const Scenario &scenario_;
  int facility_, shard_;
  FILE *record_;
  std::string prefix_;
  std::unique_ptr<MembershipStore> store_;
};

// A facility's job: a process group (returned: its pid = its group id) of a leader that holds the lease
// and one child per shard.
pid_t start_facility(const Scenario &scenario, int facility) {
  pid_t leader = ::fork();
  if (leader != 0) {
    ::setpgid(leader, leader);
    return leader;
  }
  ::setpgid(0, 0);
  default_fault_signals();
  const std::string dir = record_dir(scenario);
  std::vector<pid_t> shards;
  // The shard ranks are forked before the lease's thread exists: a fork copies only the calling thread.
  for (int shard = 0; shard < scenario.shards; ++shard) {
    pid_t child = ::fork();
    if (child == 0) {
      std::string path = dir + "/f" + std::to_string(facility) + "s" + std::to_string(shard) + "." +
                         std::to_string(::getpid());
      FILE *record = std::fopen(path.c_str(), "w");
      if (!record) std::_Exit(5);
      int code = 0;
      try {
        ShardRank rank(scenario, facility, shard, record);
        code = rank.run();
        std::fprintf(record, "done\n");
      } catch (const xffl::Error &error) {
        std::fprintf(record, "error %d %s\n", static_cast<int>(error.status()), error.what());
        code = 3;
      } catch (const std::exception &error) {
        std::fprintf(record, "error %d %s\n", static_cast<int>(XFFL_EINTERNAL), error.what());
        code = 3;
      }
      std::fclose(record);
      std::_Exit(code);
    }
    shards.push_back(child);
  }
  std::string path = dir + "/f" + std::to_string(facility) + "leader." + std::to_string(::getpid());
  FILE *record = std::fopen(path.c_str(), "w");
  if (!record) std::_Exit(5);
  int worst = 0;
  try {
    FacilityLease lease(parse_endpoint(backend->endpoint(), "the test's endpoint"), federation_test::kSecret,
                        kTimeoutMs, prefix_of(scenario), facility, kTtl);
    std::fprintf(record, "registered %s\n", lease.incarnation().c_str());
    std::fflush(record);
    size_t running = shards.size();
    uint64_t evictions_seen = 0;
    auto record_rejoin = [&] {
      if (lease.evictions() == evictions_seen || !lease.registered()) return;
      evictions_seen = lease.evictions();
      std::fprintf(record, "lease-evicted %s\n", lease.eviction_cause().c_str());
      std::fprintf(record, "rejoined %s\n", lease.incarnation().c_str());
      std::fflush(record);
    };
    while (running > 0) {
      int status = 0;
      pid_t done = ::waitpid(-1, &status, WNOHANG);
      if (done > 0) {
        --running;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) worst = 3;
        continue;
      }
      record_rejoin();
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    // The shards may finish their rounds within one of the sleeps above after the lease rejoined.
    record_rejoin();
  } catch (const std::exception &error) {
    std::fprintf(record, "error %s\n", error.what());
    worst = 4;
  }
  std::fclose(record);
  std::_Exit(worst);
}

// Waits for a facility's group (its leader) to end, at most `seconds`; kills the group past that.
int wait_facility(pid_t leader, int seconds) {
  auto deadline = Clock::now() + std::chrono::seconds(seconds);
  while (Clock::now() < deadline) {
    int status = 0;
    if (::waitpid(leader, &status, WNOHANG) == leader) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ::kill(-leader, SIGKILL);
  ::waitpid(leader, nullptr, 0);
  return -1;
}

void kill_facility(pid_t leader) {
  ::kill(-leader, SIGKILL);
  ::waitpid(leader, nullptr, 0);
}

// Polls `done` every 50 ms for at most `seconds`: a bound that fails the test, never a measurement.
template <typename Done>
bool eventually(int seconds, Done done) {
  auto deadline = Clock::now() + std::chrono::seconds(seconds);
  while (Clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return done();
}

// ----- reading the records -----

struct Commit {
  int64_t round = 0, epoch = 0;
  std::string contributors, joining, value;
  int facility = 0, shard = 0;
};

struct Records {
  std::vector<Commit> commits;
  std::map<std::string, std::vector<std::string>> lines;  // file name -> lines
  std::vector<std::string> errors;                      // "f<F>s<S>: error <status> ..."
  int count(const std::string &file_start, const std::string &line_start) const {
    int n = 0;
    for (const auto &[file, all] : lines)
      if (file.rfind(file_start, 0) == 0)
        for (const std::string &line : all) n += line.rfind(line_start, 0) == 0;
    return n;
  }
};

Records read_records(const Scenario &scenario) {
  Records records;
  const std::string dir = record_dir(scenario);
  DIR *folder = ::opendir(dir.c_str());
  assert_non_null(folder);
  while (dirent *entry = ::readdir(folder)) {
    std::string name = entry->d_name;
    if (name[0] != 'f') continue;
    std::ifstream in(dir + "/" + name);
    std::string line;
    while (std::getline(in, line)) {
      records.lines[name].push_back(line);
      if (line.rfind("error", 0) == 0) records.errors.push_back(name + ": " + line);
      if (line.rfind("commit ", 0) != 0) continue;
      Commit commit;
      std::istringstream fields(line.substr(7));
      fields >> commit.round >> commit.epoch >> commit.contributors >> commit.joining >> commit.value;
      commit.facility = name[1] - '0';
      commit.shard = std::stoi(name.substr(name.find('s') + 1));
      records.commits.push_back(commit);
    }
  }
  ::closedir(folder);
  return records;
}

std::vector<int> parse_csv(const std::string &text) {
  std::vector<int> out;
  if (text == "-") return out;
  std::istringstream items(text);
  std::string item;
  while (std::getline(items, item, ',')) out.push_back(std::stoi(item));
  return out;
}

// Every committed round: one epoch and one contributor set for all shards and processes, the value
// identical everywhere and exactly the weighted mean over the contributors. Returns round -> contributors.
std::map<int64_t, std::string> check_commits(const Scenario &scenario, const Records &records) {
  std::map<int64_t, std::string> contributors;
  std::map<std::pair<int64_t, int>, std::string> value;  // (round, shard) -> value
  std::map<int64_t, int64_t> epoch;
  for (const Commit &c : records.commits) {
    if (!epoch.count(c.round)) {
      epoch[c.round] = c.epoch;
      contributors[c.round] = c.contributors;
    }
    if (epoch[c.round] != c.epoch || contributors[c.round] != c.contributors)
      fail_msg("%s: round %lld committed in epoch %lld (contributors %s) by one rank and in epoch %lld (%s) by "
               "facility %d shard %d",
               scenario.name.c_str(), (long long)c.round, (long long)epoch[c.round], contributors[c.round].c_str(),
               (long long)c.epoch, c.contributors.c_str(), c.facility, c.shard);
    auto key = std::make_pair(c.round, c.shard);
    if (!value.count(key)) value[key] = c.value;
    if (value[key] != c.value)
      fail_msg("%s: round %lld shard %d: %s here, %s at facility %d", scenario.name.c_str(), (long long)c.round,
               c.shard, value[key].c_str(), c.value.c_str(), c.facility);
  }
  for (const auto &[key, text] : value) {
    double previous = initial_model(key.second);
    if (key.first > 1) {
      auto before = value.find({key.first - 1, key.second});
      assert_true(before != value.end());
      previous = std::strtod(before->second.c_str(), nullptr);
    }
    const std::string want = hex_of(mean_of(parse_csv(contributors[key.first]), scenario.weights, previous, key.first));
    if (want != text)
      fail_msg("%s: round %lld shard %d is %s, the mean over facilities %s is %s", scenario.name.c_str(),
               (long long)key.first, key.second, text.c_str(), contributors[key.first].c_str(), want.c_str());
  }
  return contributors;
}

void expect_no_errors(const Records &records) {
  for (const std::string &error : records.errors) fail_msg("%s", error.c_str());
}

// Which (facility, shard) committed round `round` (one entry per record file that did).
std::set<std::pair<int, int>> committers(const Records &records, int64_t round) {
  std::set<std::pair<int, int>> out;
  for (const Commit &c : records.commits)
    if (c.round == round) out.insert({c.facility, c.shard});
  return out;
}

struct Run {
  Scenario scenario;
  std::unique_ptr<MembershipStore> store;
  std::string prefix;
  std::vector<pid_t> leaders;
  explicit Run(Scenario s) : scenario(std::move(s)), store(connect_store()), prefix(prefix_of(scenario)) {
    ::mkdir(record_dir(scenario).c_str(), 0755);
  }
  void start_all() {
    for (int f = 0; f < scenario.facilities; ++f) leaders.push_back(start_facility(scenario, f));
  }
  bool committed_at_least(int64_t round, int seconds = 60) {
    return eventually(seconds, [&] { return committed_round(*store, prefix) >= round; });
  }
  // Every facility still running ends by itself; the codes per facility.
  std::vector<int> finish(int seconds = 90) {
    std::vector<int> codes;
    for (pid_t leader : leaders) codes.push_back(leader > 0 ? wait_facility(leader, seconds) : 0);
    return codes;
  }
  ~Run() {
    for (pid_t leader : leaders)
      if (leader > 0) kill_facility(leader);
    std::string command = "rm -rf '" + record_dir(scenario) + "'";
    if (std::system(command.c_str()) != 0) std::fprintf(stderr, "could not remove %s\n", record_dir(scenario).c_str());
  }
};

// ----- the tests -----

// Runs the three facilities through `rounds` rounds where none is lost: every facility ends with 0 and
// no error, and every round commits in its epoch with all three, never redone.
Records run_without_loss(Run &run, int64_t rounds) {
  set_gate(*run.store, run.prefix, rounds);
  run.start_all();
  std::vector<int> codes = run.finish();
  run.leaders.clear();
  Records records = read_records(run.scenario);
  expect_no_errors(records);
  for (int code : codes) assert_int_equal(code, 0);
  auto contributors = check_commits(run.scenario, records);
  assert_int_equal(contributors.size(), rounds);
  for (const auto &[round, set] : contributors) assert_string_equal(set.c_str(), "0,1,2");
  assert_int_equal(records.count("f", "redo"), 0);
  return records;
}

// No fault: every round commits in epoch 1 with every facility, weighted, identical everywhere.
void test_no_fault(void **) {
  Scenario scenario = scenario_of("nofault", 3, 2, 4);
  scenario.weights = {1.0, 2.0, 3.0};
  Run run(scenario);
  Records records = run_without_loss(run, 4);
  for (int64_t round = 1; round <= 4; ++round) assert_int_equal(committers(records, round).size(), 6);
}

// A delayed write of an earlier round's ack (a put that a dead or cut-off process's store connection
// still had in flight, delivered once its link is back) overwrites facility 0 shard 0's ack of round 2
// while the round waits for its last ack: facility 0 shard 0 puts its ack again, and the round commits
// in its epoch with every facility, instead of every member failing at the timeout.
void test_stale_ack_overwritten(void **) {
  Scenario scenario = scenario_of("staleack", 3, 2, 3);
  scenario.stale_ack_round = 2;
  Run run(scenario);
  run_without_loss(run, 3);
}

// SIGKILL of a whole facility between rounds: the survivors notice its lease end, agree on epoch 2 and
// redo the round among themselves; later rounds are means over the two.
void test_kill_between_rounds(void **) {
  Run run(scenario_of("killbetween", 3, 2, 4));
  set_gate(*run.store, run.prefix, 2);
  run.start_all();
  assert_true(run.committed_at_least(2));
  kill_facility(run.leaders[2]);
  run.leaders[2] = 0;
  set_gate(*run.store, run.prefix, 4);
  std::vector<int> codes = run.finish();
  run.leaders.clear();
  Records records = read_records(run.scenario);
  expect_no_errors(records);
  assert_int_equal(codes[0], 0);
  assert_int_equal(codes[1], 0);
  auto contributors = check_commits(run.scenario, records);
  assert_string_equal(contributors[1].c_str(), "0,1,2");
  assert_string_equal(contributors[2].c_str(), "0,1,2");
  assert_string_equal(contributors[3].c_str(), "0,1");
  assert_string_equal(contributors[4].c_str(), "0,1");
  assert_int_equal(committers(records, 4).size(), 4);
}

// SIGKILL after one shard of a facility acked a round and before the other did: the round cannot
// commit in its epoch, so every shard of every survivor redoes it in the same new epoch.
void test_kill_after_partial_ack(void **) {
  Scenario scenario = scenario_of("partialack", 3, 2, 3);
  scenario.partial_ack_facility = 2;
  scenario.partial_ack_round = 2;
  Run run(scenario);
  set_gate(*run.store, run.prefix, 3);
  run.start_all();
  std::vector<int> codes = run.finish();
  run.leaders.clear();
  Records records = read_records(run.scenario);
  expect_no_errors(records);
  assert_int_equal(codes[0], 0);
  assert_int_equal(codes[1], 0);
  assert_int_equal(records.count("f2s1", "dying after shard 0 acked round 2"), 1);
  auto contributors = check_commits(run.scenario, records);
  assert_string_equal(contributors[1].c_str(), "0,1,2");
  assert_string_equal(contributors[2].c_str(), "0,1");  // never a commit with facility 2's half
  assert_int_equal(committers(records, 2).size(), 4);
  assert_int_equal(committers(records, 3).size(), 4);
}

// SIGSTOP: the hung facility is lost once its lease ends; on SIGCONT its lease holder finds the lease
// ended (evicted) and registers again by itself, its shards learn they were evicted, and it is admitted at the
// next round boundary, receives the model (sealed) and ends identical to the others.
void test_sigstop_then_evicted_and_healed(void **) {
  Run run(scenario_of("sigstop", 3, 2, 6));
  set_gate(*run.store, run.prefix, 2);
  run.start_all();
  assert_true(run.committed_at_least(2));
  const std::string before = run.store->get(member_key(run.prefix, 2))->value;
  ::kill(-run.leaders[2], SIGSTOP);
  set_gate(*run.store, run.prefix, 4);
  assert_true(run.committed_at_least(4));
  ::kill(-run.leaders[2], SIGCONT);
  assert_true(eventually(60, [&] {
    auto entry = run.store->get(member_key(run.prefix, 2));
    return entry && entry->value != before;
  }));
  set_gate(*run.store, run.prefix, 6);
  std::vector<int> codes = run.finish();
  run.leaders.clear();
  Records records = read_records(run.scenario);
  expect_no_errors(records);
  for (int code : codes) assert_int_equal(code, 0);
  assert_int_equal(records.count("f2leader", "lease-evicted"), 1);
  auto contributors = check_commits(run.scenario, records);
  assert_string_equal(contributors[3].c_str(), "0,1");
  assert_string_equal(contributors[4].c_str(), "0,1");
  assert_string_equal(contributors[6].c_str(), "0,1");  // facility 2 joins in round 6: it receives
  assert_int_equal(committers(records, 6).size(), 6);   // ...and holds the same model
  assert_int_equal(records.count("f2s", "begin 6"), 2);
}

// A facility restarted (a new job, a new incarnation) is admitted at a round boundary, told the round
// it resumes at, receives the model, and takes part afterwards.
void test_restart_is_admitted(void **) {
  Run run(scenario_of("restart", 3, 2, 6));
  set_gate(*run.store, run.prefix, 2);
  run.start_all();
  assert_true(run.committed_at_least(2));
  kill_facility(run.leaders[2]);
  run.leaders[2] = 0;
  set_gate(*run.store, run.prefix, 3);
  assert_true(run.committed_at_least(3));
  run.leaders[2] = start_facility(run.scenario, 2);
  assert_true(eventually(60, [&] { return run.store->get(member_key(run.prefix, 2)).has_value(); }));
  set_gate(*run.store, run.prefix, 6);
  std::vector<int> codes = run.finish();
  run.leaders.clear();
  Records records = read_records(run.scenario);
  expect_no_errors(records);
  for (int code : codes) assert_int_equal(code, 0);
  auto contributors = check_commits(run.scenario, records);
  assert_string_equal(contributors[3].c_str(), "0,1");
  assert_string_equal(contributors[4].c_str(), "0,1");   // the restarted facility is admitted at its end
  assert_string_equal(contributors[5].c_str(), "0,1");   // round 5: it receives
  assert_string_equal(contributors[6].c_str(), "0,1,2");  // round 6: it contributes
  assert_int_equal(records.count("f2s", "begin 5"), 2);   // told round 5, joining
  assert_int_equal(committers(records, 6).size(), 6);
}

// Below the quorum (2 of 3) every survivor's shard gets XFFL_EQUORUM, none hangs.
void test_below_quorum(void **) {
  Run run(scenario_of("quorum", 3, 2, 4));
  set_gate(*run.store, run.prefix, 1);
  run.start_all();
  assert_true(run.committed_at_least(1));
  kill_facility(run.leaders[1]);
  kill_facility(run.leaders[2]);
  run.leaders[1] = run.leaders[2] = 0;
  set_gate(*run.store, run.prefix, 4);
  std::vector<int> codes = run.finish();
  run.leaders.clear();
  Records records = read_records(run.scenario);
  assert_int_equal(codes[0], 3);
  assert_int_equal(records.count("f0s", "error -13"), 2);
  assert_int_equal(records.count("f0s", "commit 2"), 0);
  check_commits(run.scenario, records);
}

// Two facilities whose link is cut: each reports the other lost at the same time; whichever CAS wins,
// the new epoch is below the quorum of 2: both sides stop (no split brain).
void test_cut_link_stops_both(void **) {
  Scenario scenario = scenario_of("cut", 2, 2, 3);
  scenario.cut_round = 2;
  Run run(scenario);
  set_gate(*run.store, run.prefix, 3);
  run.start_all();
  std::vector<int> codes = run.finish();
  run.leaders.clear();
  Records records = read_records(run.scenario);
  assert_int_equal(codes[0], 3);
  assert_int_equal(codes[1], 3);
  assert_int_equal(records.count("f", "error -13"), 4);
  assert_int_equal(records.count("f", "commit 2"), 0);
  check_commits(run.scenario, records);
}

// Many ranks race to commit each round (every one of them may complete the ack set): never two
// commits of one round.
void test_racing_commits(void **) {
  Run run(scenario_of("race", 4, 3, 4));
  set_gate(*run.store, run.prefix, 4);
  run.start_all();
  std::vector<int> codes = run.finish();
  run.leaders.clear();
  Records records = read_records(run.scenario);
  expect_no_errors(records);
  for (int code : codes) assert_int_equal(code, 0);
  auto contributors = check_commits(run.scenario, records);
  for (const auto &[round, set] : contributors) assert_string_equal(set.c_str(), "0,1,2,3");
  for (int64_t round = 1; round <= 4; ++round) assert_int_equal(committers(records, round).size(), 12);
  assert_int_equal(committers(records, 1).size(), 12);
}

// A facility whose average ends after its ack and before the round's decision (its store stopped
// answering it, the deadline came: epochs.h, await_round): the others commit the round with its part.
// Its next call learns that (Committed) and, since it gave its caller the input back, receives the model
// (begin_round_receiving: a new epoch with the same members, itself joining) instead of contributing its
// input again, which would count its update twice: round 3 is redone in epoch 2 by facilities 0 and 1,
// facility 2 receives it and contributes again from round 4. check_commits proves every round is the
// exact mean over its contributors of the committed model before it (a stale input would not be).
void test_unknown_outcome_then_receive(void **) {
  Scenario scenario = scenario_of("unknown", 3, 2, 4);
  scenario.unknown_facility = 2;
  scenario.unknown_round = 2;
  Run run(scenario);
  set_gate(*run.store, run.prefix, 4);
  run.start_all();
  std::vector<int> codes = run.finish();
  run.leaders.clear();
  Records records = read_records(run.scenario);
  expect_no_errors(records);
  for (int code : codes) assert_int_equal(code, 0);
  auto contributors = check_commits(run.scenario, records);
  assert_int_equal(contributors.size(), 4);
  assert_string_equal(contributors[2].c_str(), "0,1,2");  // it counted facility 2's part
  assert_string_equal(contributors[3].c_str(), "0,1");    // facility 2 receives round 3
  assert_string_equal(contributors[4].c_str(), "0,1,2");
  assert_int_equal(records.count("f2s", "unknown 2 1: committed"), 2);
  assert_int_equal(records.count("f2s", "begin 3 2 1"), 2);
  assert_int_equal(committers(records, 2).size(), 4);  // facility 2 has no commit of round 2
  assert_int_equal(committers(records, 3).size(), 6);  // it commits the round it received
}

// Every wait is bounded by the timeout and names what it awaited; a bad configuration is refused.
void test_bounded_waits_and_invalid_config(void **) {
  const std::string prefix = federation_prefix(std::string(kJobId) + "-bounds");
  CoordinatorConfig config;
  config.prefix = prefix;
  config.facilities = 2;
  config.timeout_ms = 1500;
  config.lease_ttl_seconds = kTtl;
  auto refused = [&](CoordinatorConfig bad, const std::string &phrase) {
    expect_failure(outcome_of([&] { RoundCoordinator coordinator(connect_store(), bad); }), XFFL_EINVAL, {phrase});
  };
  CoordinatorConfig bad = config;
  bad.facility = 2;
  refused(bad, "facility 2 outside [0, 2)");
  bad = config;
  bad.shard = 1;
  refused(bad, "shard 1 outside [0, 1)");
  bad = config;
  bad.quorum = 3;
  refused(bad, "quorum 3");
  bad = config;
  bad.weights = {1.0};
  refused(bad, "1 weights for 2 facilities");
  bad = config;
  bad.weights = {1.0, 0.0};
  refused(bad, "facility 1's weight 0");

  const Endpoint endpoint = parse_endpoint(backend->endpoint(), "the test's endpoint");
  FacilityLease first(endpoint, federation_test::kSecret, kTimeoutMs, prefix, 0, kTtl);
  RoundCoordinator coordinator(connect_store(), config);
  // Facility 1 never registers: no first epoch, and the message says who is missing.
  expect_failure(outcome_of([&] { coordinator.begin_round(); }), XFFL_ETIMEOUT,
                 {"facility 0 shard 0", "1500 ms", "missing: facilities 1"});
  // Facility 1 registers but never acks: the round stays undecided, and the message names the acks.
  FacilityLease second(endpoint, federation_test::kSecret, kTimeoutMs, prefix, 1, kTtl);
  RoundPlan plan = coordinator.begin_round();
  assert_int_equal(plan.epoch, 1);
  assert_int_equal(plan.round, 1);
  assert_true(plan.weights == std::vector<double>({0.5, 0.5}));
  expect_failure(outcome_of([&] { coordinator.commit_round(plan); }), XFFL_ETIMEOUT,
                 {"round 1 of epoch 1", "awaited the acks of facility 1 shards 0"});
  RoundPlan foreign = plan;
  foreign.members = {1};
  expect_failure(outcome_of([&] { coordinator.commit_round(foreign); }), XFFL_EINVAL, {"not one begin_round gave"});
  expect_failure(outcome_of([&] { coordinator.fail_round(plan, {5}, "x"); }), XFFL_EINVAL, {"lost facility 5"});
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 2 || (std::strcmp(argv[1], "xffl") != 0 && std::strcmp(argv[1], "etcd") != 0)) {
    std::fprintf(stderr, "usage: %s xffl TOOL | etcd\n", argv[0]);
    return 2;
  }
  backend_name = argv[1];
  records_root = "/tmp/xffl-rounds-" + std::to_string(::getpid());
  ::signal(SIGPIPE, SIG_IGN);
  try {
    if (backend_name == "xffl") {
      if (argc < 3) {
        std::fprintf(stderr, "usage: %s xffl PATH-TO-xffl-federation\n", argv[0]);
        return 2;
      }
      backend.reset(federation_test::start_xffl_server(argv[2]));
    } else {
      backend.reset(federation_test::start_etcd_cluster(3));
      if (!backend) {
        std::printf("etcd or etcdctl is not installed (Debian: etcd-server etcd-client): skipped\n");
        return 77;
      }
    }
  } catch (const std::exception &error) {
    std::fprintf(stderr, "could not start the %s store: %s\n", argv[1], error.what());
    return 1;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_no_fault),
      cmocka_unit_test(test_stale_ack_overwritten),
      cmocka_unit_test(test_kill_between_rounds),
      cmocka_unit_test(test_kill_after_partial_ack),
      cmocka_unit_test(test_sigstop_then_evicted_and_healed),
      cmocka_unit_test(test_restart_is_admitted),
      cmocka_unit_test(test_below_quorum),
      cmocka_unit_test(test_cut_link_stops_both),
      cmocka_unit_test(test_racing_commits),
      cmocka_unit_test(test_unknown_outcome_then_receive),
      cmocka_unit_test(test_bounded_waits_and_invalid_config),
  };
  // XFFL_TEST_FILTER: only the tests whose names match (cmocka's pattern, * and ?), to loop one of them.
  if (const char *only = std::getenv("XFFL_TEST_FILTER")) cmocka_set_test_filter(only);
  int failed = cmocka_run_group_tests_name(backend_name == "etcd" ? "federation rounds on etcd"
                                                                  : "federation rounds on xffl-federation",
                                           tests, nullptr, nullptr);
  backend.reset();
  return failed;
}
