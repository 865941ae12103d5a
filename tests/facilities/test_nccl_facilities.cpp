// Facility mode under NCCL as the main backend (state/facility_backend.h), on the fake NCCL (threads as
// ranks, host memory as device memory; no GPU): two facility jobs, each its own fake NCCL and job store
// over job ranks, W = 6, F = (2, 4), S = 2. The state's groups in global ranks go through
// FacilityBackend: the REPLICA family is translated to job ranks and split on the job's NCCL, the
// FEDERATED family keeps its global ranks and crosses on the wan backend through host staging, its
// address published only by the senders (lazily). The weighted mean is exact on every rank, and NCCL
// never reduces across facilities.

#include <cstring>
#include <thread>
#include <vector>

#include "comm/nccl/host_staged_communicator.h"
#include "comm/wan/wan_backend.h"
#include "federated_rank.h"
#include "state/facility_backend.h"

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

constexpr int kWorld = 6;
const std::vector<int> kSizes{2, 4};
const int kOffsets[2] = {0, 2};

// A wan exchange shared by both facilities (the federation's store, in memory) that records who
// published.
class RecordingExchange final : public Exchange {
 public:
  void publish(const std::string &key, const std::vector<uint8_t> &value) override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      keys_.push_back(key);
    }
    inner_.publish(key, value);
  }
  std::vector<uint8_t> fetch(const std::string &key, int timeout_ms) override { return inner_.fetch(key, timeout_ms); }
  GroupIdentity claim_group(const std::vector<int> &members, uint32_t creation, int timeout_ms) override {
    return inner_.claim_group(members, creation, timeout_ms);
  }
  void release_group(uint32_t slot) noexcept override { inner_.release_group(slot); }
  std::vector<std::string> keys() {
    std::lock_guard<std::mutex> lock(mutex_);
    return keys_;
  }

 private:
  harness::MemoryExchange inner_;
  std::mutex mutex_;
  std::vector<std::string> keys_;
};

void weighted_average_of_two_facility_jobs(void **) {
  auto wan_exchange = std::make_shared<RecordingExchange>();
  std::shared_ptr<FakeNccl> fakes[2] = {std::make_shared<FakeNccl>(1), std::make_shared<FakeNccl>(1)};
  std::vector<harness::Outcome> outcomes[2];
  std::vector<int> staged(kWorld, -1);
  auto facility_job = [&](int facility) {
    const int offset = kOffsets[facility], size = kSizes[static_cast<size_t>(facility)];
    outcomes[facility] = harness::run_ranks(fakes[facility], size, 20000, [&](int job_rank, NcclBackend &nccl) {
      const int rank = offset + job_rank;  // global
      wan::WanSettings settings;
      settings.rank = rank;
      settings.world_size = kWorld;
      settings.timeout_ms = 20000;
      settings.streams = 2;
      settings.secret = "facility-secret";
      settings.job_id = "facilities";
      settings.store_host = "127.0.0.1";
      settings.publish_lazily = true;
      nccl.set_crossing_backend(std::make_shared<WanBackend>(settings, wan_exchange));
      // The state's view: global ranks, through the facility's translation (the job's NCCL backend lives
      // on this thread's stack: not owned).
      FacilityBackend backend(std::shared_ptr<Backend>(&nccl, [](Backend *) {}), offset, size);
      const topology::RankPlan plan =
          topology::plan_federated(kWorld, std::make_shared<const std::vector<int>>(kSizes), 2, rank);
      backend.select_device(-1, job_rank, 1);
      backend.register_world(harness::spec_of(topology::RankList::progression(offset, 1, size), rank, "world", 1));
      GroupSpec federated = harness::spec_of(*plan.federated_group, rank, "federated group", 10);
      federated.crosses_facilities = true;
      const GroupSpec replica = harness::spec_of(*plan.replica_group, rank, "replica group", 11);
      backend.prepare_family(federated, 0);
      backend.prepare_family(replica, 0);
      harness::FederatedRank me;
      me.federated = backend.create_communicator(federated);
      me.replica = backend.create_communicator(replica);
      staged[static_cast<size_t>(rank)] = dynamic_cast<nccl::HostStagedCommunicator *>(me.federated.get()) != nullptr;
      federated::Placement placement;
      placement.federated_groups = 2;
      placement.federated_rank = facility;
      placement.is_sender = *plan.is_sender;
      placement.hsdp = true;
      placement.sender_index = plan.replica_group->index_of(plan.receive_from.value_or(rank));
      placement.federated_sizes = kSizes;
      placement.weights = {1.0, 3.0};
      static const federated::StrategyTable strategies;
      me.strategy = &strategies.get(XFFL_FEDAVG_HIERARCHICAL);
      harness::TwoGroups groups(me);
      me.roles = me.strategy->roles(placement, groups);
      std::vector<float> shard(20011);
      harness::fill(shard, me.roles);
      me.strategy->average(me.roles, shard.data(), shard.size(), XFFL_F32, nullptr);
      for (size_t i = 0; i < shard.size(); ++i) {
        const float expected =
            static_cast<float>((1.0 * harness::facility_value(0, i) + 3.0 * harness::facility_value(1, i)) / 4.0);
        if (shard[i] != expected)
          (xffl::fail)(XFFL_EINTERNAL, "rank ", rank, " element ", i, " is ", shard[i], ", not ", expected);
      }
    });
  };
  std::thread first(facility_job, 0), second(facility_job, 1);
  first.join();
  second.join();
  assert_all_ok(outcomes[0]);
  assert_all_ok(outcomes[1]);
  // Senders 0, 1 (facility 0) and 2, 5 (facility 1) cross, staged through the host; the others are
  // alone in their federated group (a device copy) and never published an address.
  const std::vector<int> senders{0, 1, 2, 5};
  for (int rank = 0; rank < kWorld; ++rank) {
    const bool sender = std::find(senders.begin(), senders.end(), rank) != senders.end();
    assert_int_equal(staged[static_cast<size_t>(rank)], sender ? 1 : 0);
  }
  std::vector<std::string> keys = wan_exchange->keys();
  std::sort(keys.begin(), keys.end());
  const std::vector<std::string> expected_keys{"xffl/wan/addr/0", "xffl/wan/addr/1", "xffl/wan/addr/2",
                                               "xffl/wan/addr/5"};
  assert_true(keys == expected_keys);
  for (int facility = 0; facility < 2; ++facility)
    for (const auto &call : fakes[facility]->calls())  // NCCL reduced nothing: the relay is a broadcast
      assert_false(call.name == "allreduce" || call.name == "premul_create");
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {cmocka_unit_test(weighted_average_of_two_facility_jobs)};
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
