// XFFL_FACILITY_FAULTS_CONTINUE over device memory (state/facility_rounds.h, "Device memory"), on the
// closest path to a GPU user's that runs without a GPU: three facility jobs of two thread-ranks each
// (W = 6, F = (2, 2, 2), HSDP 1: job rank 0 crosses, job rank 1 receives the relay), each job its own
// strict fake NCCL (tests/unit_nccl/fake_nccl.h: device memory the host cannot touch, work in stream
// order) and job exchange, the crossing over the wan backend through the federation's built-in store
// (tools/xffl-federation, argv[1]), the REPLICA group an NCCL communicator, FacilityRounds as the state
// drives it (DistributedState::continuing_average's placement), the buffers device memory written and
// read only through copies on the stream: three per call, one of them empty, as
// xffl_federated_average_many passes them (packed for the crossing, relayed one by one).
//
// Rounds (each checked on every rank: the device buffers copied back, XFFL_ATTR_FEDERATION_* as
// FacilityRounds::progress says):
//   1. every facility contributes: the exact mean of the three, bit-identical on all six ranks;
//   2. facility 2's job ends (its lease revoked, its wan links closed) while facilities 0 and 1 are in
//      their average (after both entered it, unless the machine is slow enough that they had not
//      started crossing: then between rounds, and the same result is required): they complete the
//      round among themselves, the exact mean of the two, in a new epoch;
//   3. facility 2's job starts again (a new fake NCCL, new wan addresses, a new lease) before the
//      survivors' round 3, which they complete among themselves; its commit admits facility 2 (the
//      next round boundary);
//   4. facility 2's first average, whose input is garbage, receives the survivors' model of round 4
//      (sealed, verified) onto device memory: bit-identical on all six ranks, round 4, live {0, 1}, a
//      new epoch;
//   5. the three contribute again: the exact mean of the three.
// Twice: as collectives complete by default, and with XFFL_OPT_ENQUEUE_ONLY (they return once enqueued).
// The values are small integers, so every mean is exact in f32 whatever the order of the sums.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "backends.h"
#include "comm/wan/wan_backend.h"
#include "common/log.h"
#include "fake_nccl.h"
#include "federation/settings.h"
#include "nccl_harness.h"
#include "state/facility_backend.h"
#include "state/facility_link.h"
#include "state/facility_rounds.h"
#include "topology/plan.h"

// cmocka after the C++ headers: its fail() macro would clash with xffl::fail.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {  // cmocka has no extern "C" of its own
#include <cmocka.h>
}

using namespace xffl;
using namespace xffl::comm;
using xffl::test::FakeNccl;

namespace {

constexpr int kFacilities = 3;
constexpr int kJobSize = 2;
constexpr int kWorld = kFacilities * kJobSize;
constexpr int kTimeoutMs = 20000;
// The model: three device buffers averaged by one call (as xffl_federated_average_many), the middle
// one empty (NULL), so the staging packs and the relay moves each buffer; kCount values in all.
constexpr size_t kCounts[3] = {4099, 0, 13};
constexpr size_t kCount = kCounts[0] + kCounts[1] + kCounts[2];
const char *const kSecret = federation_test::kSecret;  // the server the test starts has it
const char *const kJobId = "nccl-continue";
std::string g_server_tool;
// XFFL_OPT_ENQUEUE_ONLY (LiveSettings::stream_ordered): collectives return once enqueued, so only the
// stream's order and the explicit waits keep the host from reading what a copy has not written yet.
bool g_enqueue_only = false;

// What facility f contributes to element i in round r, and the mean over `contributors`.
float input(int round, int facility, size_t i) { return static_cast<float>(i % 89 + 3 * facility + 7 * round); }
float mean(int round, const std::vector<int> &contributors, size_t i) {
  float sum = 0;
  for (int f : contributors) sum += input(round, f, i);
  return sum / static_cast<float>(contributors.size());
}

// Bounded waits between the test's threads; a wait that times out fails naming what it awaited.
class Flags {
 public:
  void set(const std::string &name) {
    std::lock_guard<std::mutex> lock(mutex_);
    set_.push_back(name);
    changed_.notify_all();
  }
  void wait(const std::string &name, const std::string &who) {
    std::unique_lock<std::mutex> lock(mutex_);
    const bool seen = changed_.wait_for(lock, std::chrono::milliseconds(2 * kTimeoutMs), [&] {
      return std::find(set_.begin(), set_.end(), name) != set_.end();
    });
    if (!seen) (xffl::fail)(XFFL_ETIMEOUT, who, " waited ", 2 * kTimeoutMs, " ms for ", name);
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::string> set_;
};

// What one rank saw after one round.
struct Seen {
  int round_called = 0;  // the test's round number
  std::vector<float> values;
  FacilityRounds::Progress progress;
};

// The stream's work done, polled within the timeout (as the backend's watchdog does).
void await_stream(FakeNccl &fake, void *stream, const std::string &who) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kTimeoutMs);
  while (fake.stream_query(stream) != nccl::kCudaSuccess) {
    if (std::chrono::steady_clock::now() > deadline)
      (xffl::fail)(XFFL_ETIMEOUT, who, ": the stream's copies had not completed in ", kTimeoutMs, " ms");
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

struct Federation {
  std::unique_ptr<federation_test::Backend> server;
  Flags flags;
  std::mutex mutex;
  std::vector<std::vector<Seen>> seen = std::vector<std::vector<Seen>>(kWorld);  // by global rank
};

// One facility job: its ranks average the rounds of `rounds`. Before its average of round r, a rank
// waits for the flags of before[r] (if any); after it sets "f<facility> r<r> done".
std::vector<harness::Outcome> run_job(Federation &federation, int facility, const std::vector<int> &rounds,
                                      const std::function<void(int job_rank, int round)> &before,
                                      const std::function<void(int job_rank)> &after_rounds) {
  auto fake = std::make_shared<FakeNccl>(1);
  fake->set_strict(true);
  const int offset = facility * kJobSize;
  return harness::run_ranks(fake, kJobSize, kTimeoutMs, [&](int job_rank, NcclBackend &nccl) {
    const int rank = offset + job_rank;
    const std::string who = "rank " + std::to_string(rank) + " (facility " + std::to_string(facility) + ")";
    Options options;
    options.facility = facility;
    options.federation = federation.server->endpoint();
    options.federated_sizes = "2,2,2";
    options.job_id = kJobId;
    options.auth_token = kSecret;
    options.timeout_ms = kTimeoutMs;
    options.facility_faults = XFFL_FACILITY_FAULTS_CONTINUE;
    std::shared_ptr<FacilityLink> link = FacilityLink::from_options(options, job_rank, kJobSize);
    if (job_rank == 0) link->register_facility();
    // As backend_factory.cpp makes it in facility mode under continue: global ranks, the federation's
    // store as the rendezvous, every rank's address published now, the coordinator's wait hook.
    wan::WanSettings settings;
    settings.rank = rank;
    settings.world_size = kWorld;
    settings.timeout_ms = kTimeoutMs;
    settings.streams = 1;
    settings.secret = kSecret;
    settings.job_id = kJobId;
    settings.store_host = link->store_host();
    settings.publish_lazily = false;
    settings.wait_hook = link->crossing_wait_hook();
    nccl.set_crossing_backend(std::make_shared<WanBackend>(settings, link->crossing_exchange()));
    LiveSettings live;
    live.timeout_ms = kTimeoutMs;
    live.stream_ordered = g_enqueue_only;
    nccl.apply(live);
    auto backend =
        std::make_shared<FacilityBackend>(std::shared_ptr<Backend>(&nccl, [](Backend *) {}), offset, kJobSize);
    const topology::RankPlan plan =
        topology::plan_federated(kWorld, std::make_shared<const std::vector<int>>(kFacilities, kJobSize), 1, rank);
    backend->select_device(-1, job_rank, 1);
    backend->register_world(harness::spec_of(topology::RankList::progression(offset, 1, kJobSize), rank, "world", 1));
    const GroupSpec replica = harness::spec_of(*plan.replica_group, rank, "replica group", 11);
    backend->prepare_family(replica, 0);
    std::unique_ptr<Communicator> relay = backend->create_communicator(replica);
    const int64_t ttl = federation::default_lease_ttl_seconds(kTimeoutMs);
    FacilityRounds rounds_of_job(link, job_rank, kTimeoutMs, 0, ttl, kSecret, kJobId, Logger(XFFL_LOG_INFO, rank));
    // DistributedState::continuing_average's placement, device memory on the caller's stream.
    FacilityRounds::Placement placement;
    placement.backend = backend;
    placement.crossing = *plan.is_sender && plan.federated_group && plan.federated_group->size() == kFacilities;
    placement.shard = *plan.replica_local_rank;
    placement.shards = plan.hsdp;
    if (placement.crossing)
      for (int f = 0; f < kFacilities; ++f) placement.crossing_ranks.push_back(plan.federated_group->at(f));
    placement.relay = relay.get();
    placement.relay_root = plan.replica_group->index_of(plan.receive_from.value_or(rank));
    placement.device_memory = true;
    void *stream = backend->stream(0);
    placement.stream = stream;
    if (placement.crossing != (job_rank == 0)) (xffl::fail)(XFFL_EINTERNAL, who, ": unexpected crossing role");

    void *bufs[3] = {nullptr, nullptr, nullptr};
    for (int b : {0, 2})
      if (fake->device_alloc(&bufs[b], kCounts[b] * sizeof(float)) != nccl::kCudaSuccess)
        (xffl::fail)(XFFL_ENOMEM, who, ": no device memory");
    std::vector<float> host(kCount);
    auto copy_all = [&](bool to_device) {  // the host vector is the buffers' values in order
      size_t at = 0;
      for (int b = 0; b < 3; ++b) {
        if (kCounts[b] && to_device) fake->copy_async(bufs[b], host.data() + at, kCounts[b] * sizeof(float), stream);
        if (kCounts[b] && !to_device) fake->copy_async(host.data() + at, bufs[b], kCounts[b] * sizeof(float), stream);
        at += kCounts[b];
      }
      await_stream(*fake, stream, who);
    };
    for (int round : rounds) {
      before(job_rank, round);
      // A returning facility's first input is garbage: it must not count.
      for (size_t i = 0; i < kCount; ++i) host[i] = round == 4 && facility == 2 ? -777.0f : input(round, facility, i);
      copy_all(true);
      federation.flags.set("f" + std::to_string(facility) + " j" + std::to_string(job_rank) + " r" +
                           std::to_string(round) + " entered");
      rounds_of_job.average(placement, bufs, kCounts, 3, XFFL_F32);
      std::fill(host.begin(), host.end(), 0.0f);
      copy_all(false);
      {
        std::lock_guard<std::mutex> lock(federation.mutex);
        federation.seen[static_cast<size_t>(rank)].push_back(Seen{round, host, rounds_of_job.progress()});
      }
      federation.flags.set("f" + std::to_string(facility) + " j" + std::to_string(job_rank) + " r" +
                           std::to_string(round) + " done");
    }
    for (int b : {0, 2}) fake->device_free(bufs[b]);
    // NCCL carried the relay only: per average the header, then each non-empty buffer; no reduction
    // (the crossing went over wan, on the host).
    const int broadcasts = fake->count("broadcast", job_rank), reductions = fake->count("allreduce", job_rank);
    if (broadcasts != 3 * static_cast<int>(rounds.size()) || reductions != 0)
      (xffl::fail)(XFFL_EINTERNAL, who, ": NCCL made ", broadcasts, " broadcasts and ", reductions,
                   " allreduces in ", rounds.size(), " averages, not 3 broadcasts each and no allreduce");
    after_rounds(job_rank);
  });
}

void check_round(Federation &federation, int round, const std::vector<int> &ranks, const std::vector<int> &live,
                 const std::vector<int> &contributors_of_values) {
  int64_t epoch = -1;
  for (int rank : ranks) {
    const std::vector<Seen> &all = federation.seen[static_cast<size_t>(rank)];
    const auto found = std::find_if(all.begin(), all.end(), [&](const Seen &s) { return s.round_called == round; });
    if (found == all.end()) fail_msg("rank %d has no result of round %d", rank, round);
    const Seen &seen = *found;
    if (seen.progress.round != round) fail_msg("rank %d: round %d reports round %lld", rank, round,
                                               static_cast<long long>(seen.progress.round));
    if (seen.progress.live != live) fail_msg("rank %d: round %d's live facilities differ", rank, round);
    if (epoch < 0) epoch = seen.progress.epoch;
    if (seen.progress.epoch != epoch) fail_msg("rank %d: round %d in epoch %lld, another rank's %lld", rank, round,
                                               static_cast<long long>(seen.progress.epoch),
                                               static_cast<long long>(epoch));
    for (size_t i = 0; i < kCount; ++i) {
      const float expected = mean(round, contributors_of_values, i);
      if (std::memcmp(&seen.values[i], &expected, sizeof expected) != 0)
        fail_msg("rank %d, round %d, element %zu: %g, not the exact mean %g", rank, round, i,
                 static_cast<double>(seen.values[i]), static_cast<double>(expected));
    }
  }
}

int64_t epoch_of(Federation &federation, int rank, int round) {
  for (const Seen &seen : federation.seen[static_cast<size_t>(rank)])
    if (seen.round_called == round) return seen.progress.epoch;
  return -1;
}

void lose_and_heal(bool enqueue_only) {
  g_enqueue_only = enqueue_only;
  Federation federation;
  federation.server.reset(federation_test::start_xffl_server(g_server_tool));
  std::vector<harness::Outcome> outcomes[kFacilities], returned;
  std::string driver_error;  // a wait of facility 2's driver that timed out (cmocka fails on this thread only)
  auto survivor = [&](int facility) {
    outcomes[facility] = run_job(
        federation, facility, {1, 2, 3, 4, 5},
        [&](int job_rank, int round) {
          const std::string who = "facility " + std::to_string(facility) + " job rank " + std::to_string(job_rank);
          // Round 3 once facility 2's new job holds its lease: it is admitted when round 3 commits.
          if (round == 3 && job_rank == 0) federation.flags.wait("f2 back", who);
        },
        [](int) {});
  };
  auto lost_then_back = [&] {
    outcomes[2] = run_job(
        federation, 2, {1}, [](int, int) {},
        [&](int job_rank) {
          // Round 2: once both survivors' crossing ranks are in their average, this job ends (its lease
          // is revoked and its links close as its objects go).
          if (job_rank != 0) return;
          federation.flags.wait("f0 j0 r2 entered", "facility 2");
          federation.flags.wait("f1 j0 r2 entered", "facility 2");
          std::this_thread::sleep_for(std::chrono::milliseconds(300));
        });
    // Started again once the survivors committed round 2 (else its lease could be seen by round 2's
    // commit, and it would be admitted one round earlier than this test's script).
    try {
      federation.flags.wait("f0 j0 r2 done", "facility 2's new job");
      federation.flags.wait("f1 j0 r2 done", "facility 2's new job");
    } catch (const Error &error) {
      driver_error = error.what();
      federation.flags.set("f2 back");  // the survivors' round 3 then fails at its bound, not at the flag's
      return;
    }
    returned = run_job(
        federation, 2, {4, 5},
        [&](int job_rank, int round) {
          if (round == 4 && job_rank == 0) federation.flags.set("f2 back");
        },
        [](int) {});
  };
  std::thread first([&] { survivor(0); }), second([&] { survivor(1); }), third(lost_then_back);
  first.join();
  second.join();
  third.join();
  if (!driver_error.empty()) fail_msg("facility 2's driver: %s", driver_error.c_str());
  assert_all_ok(outcomes[0]);
  assert_all_ok(outcomes[1]);
  assert_all_ok(outcomes[2]);
  assert_all_ok(returned);
  const std::vector<int> everyone{0, 1, 2, 3, 4, 5}, survivors{0, 1, 2, 3};
  check_round(federation, 1, everyone, {0, 1, 2}, {0, 1, 2});
  check_round(federation, 2, survivors, {0, 1}, {0, 1});
  check_round(federation, 3, survivors, {0, 1}, {0, 1});
  check_round(federation, 4, everyone, {0, 1}, {0, 1});
  check_round(federation, 5, everyone, {0, 1, 2}, {0, 1, 2});
  assert_true(epoch_of(federation, 0, 2) > epoch_of(federation, 0, 1));  // the loss
  assert_true(epoch_of(federation, 0, 4) > epoch_of(federation, 0, 3));  // the admission
}

void lose_and_heal_a_facility_on_device_memory(void **) { lose_and_heal(false); }
void lose_and_heal_a_facility_on_device_memory_enqueue_only(void **) { lose_and_heal(true); }

}  // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s XFFL_FEDERATION_TOOL\n", argv[0]);
    return 2;
  }
  g_server_tool = argv[1];
  const struct CMUnitTest tests[] = {cmocka_unit_test(lose_and_heal_a_facility_on_device_memory),
                                     cmocka_unit_test(lose_and_heal_a_facility_on_device_memory_enqueue_only)};
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
