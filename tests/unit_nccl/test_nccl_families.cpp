// Split colours per group family, one ncclCommSplit per rank per family, communicator sharing, and
// member-only groups with their own id; checked on the fake NCCL with threads as ranks.

#include <atomic>

#include "comm/nccl/family_plan.h"
#include "comm/nccl/nccl_communicator.h"
#include "nccl_harness.h"
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

const nccl::NcclComm *comm_of(Communicator &communicator) {
  return dynamic_cast<nccl::NcclCommunicator &>(communicator).comm().get();
}

void decisions_follow_the_partition(void **) {
  using topology::RankList;
  auto d = nccl::decide_family(RankList::explicit_ranks({4, 6, 8, 10}), 2, 12, false);
  assert_true(d.route == nccl::FamilyRoute::kSplit && d.call_split);
  assert_int_equal(d.color, 4);  // the first member: equal on every member, distinct between groups
  assert_int_equal(d.key, 2);    // NCCL ranks follow the member order
  d = nccl::decide_family(RankList::explicit_ranks({5}), 0, 12, false);
  assert_true(d.route == nccl::FamilyRoute::kAlone && d.call_split);
  assert_int_equal(d.color, nccl::kSplitNoColor);
  d = nccl::decide_family(RankList::progression(1, 2, 2), 1, 12, true);
  assert_true(d.route == nccl::FamilyRoute::kShare && d.call_split);
  assert_int_equal(d.color, nccl::kSplitNoColor);
  d = nccl::decide_family(RankList::progression(0, 1, 12), 3, 12, true);  // the whole world: no split at all
  assert_true(d.route == nccl::FamilyRoute::kShare && !d.call_split);
  d = nccl::decide_family(RankList::explicit_ranks({1, 0}), 0, 2, false);  // the world reordered: a split
  assert_true(d.route == nccl::FamilyRoute::kSplit && d.call_split);
  assert_int_equal(d.color, 1);
}

// DESIGN.md 3.3: W = 12, F = (4, 8), S = 2, with K = 2 stream instances.
void federated_hsdp_families_split_once_each_and_share(void **) {
  auto fake = std::make_shared<FakeNccl>(1);
  const int world = 12, k = 2;
  auto sizes = std::make_shared<const std::vector<int>>(std::vector<int>{4, 8});
  std::vector<int> splits(world), created(world);
  auto outcomes = harness::run_ranks(fake, world, 20000, [&](int rank, NcclBackend &backend) {
    backend.select_device(-1, rank, k);
    const topology::RankPlan plan = topology::plan_federated(world, sizes, 2, rank);
    auto world_spec = harness::spec_of(topology::RankList::progression(0, 1, world), rank, "world group", 1);
    backend.register_world(world_spec);
    std::vector<std::pair<GroupSpec, int>> families;
    unsigned long long tag = 100;
    families.push_back({harness::spec_of(*plan.hsdp_replica_group, rank, "hsdp replica", tag++), 0});
    families.push_back({harness::spec_of(*plan.hsdp_shard_group, rank, "hsdp shard", tag++), 0});
    families.push_back({harness::spec_of(*plan.federation, rank, "federation", tag++), 0});
    for (int i = 0; i < k; ++i) families.push_back({harness::spec_of(*plan.federated_group, rank, "federated", tag++), i});
    for (int i = 0; i < k; ++i) families.push_back({harness::spec_of(*plan.replica_group, rank, "replica", tag++), i});
    std::vector<std::unique_ptr<Communicator>> communicators;
    for (auto &[spec, instance] : families) {
      backend.prepare_family(spec, instance);
      communicators.push_back(backend.create_communicator(spec));
    }
    splits[static_cast<size_t>(rank)] = backend.splits_called();
    created[static_cast<size_t>(rank)] = backend.communicators_created();
    // REPLICA instance 0 shares HSDP_REPLICA's communicator; instance 1 has its own.
    if (comm_of(*communicators[5]) != comm_of(*communicators[0])) (xffl::fail)(XFFL_EINTERNAL, "replica 0 not shared");
    if (comm_of(*communicators[6]) == comm_of(*communicators[0])) (xffl::fail)(XFFL_EINTERNAL, "replica 1 shared");
    // Every family's group really is its members: a sum of ranks over each.
    for (size_t f = 0; f < families.size(); ++f) {
      float value = static_cast<float>(rank), sum = -1;
      communicators[f]->allreduce(&value, &sum, 1, XFFL_F32, XFFL_SUM, nullptr);
      float expected = 0;
      for (int m : families[f].first.members.to_vector()) expected += static_cast<float>(m);
      if (sum != expected) (xffl::fail)(XFFL_EINTERNAL, families[f].first.description, ": sum ", sum, " != ", expected);
    }
  });
  assert_all_ok(outcomes);
  for (int rank = 0; rank < world; ++rank) {
    assert_int_equal(splits[static_cast<size_t>(rank)], 7);  // 7 families, one split each
    assert_int_equal(fake->count("split", rank), 7);
    assert_int_equal(fake->count("init", rank), 1);  // only the world is made from an id
  }
  // Senders (0, 3, 4, 7) cross facilities: world, replica, shard, federation, federated x2, replica 1.
  for (int rank : {0, 3, 4, 7}) assert_int_equal(created[static_cast<size_t>(rank)], 7);
  // Others are alone in their federated groups: no communicator for them.
  for (int rank : {1, 2, 5, 6, 8, 9, 10, 11}) assert_int_equal(created[static_cast<size_t>(rank)], 5);
}

void fsdp_over_the_world_shares_the_world_communicator(void **) {
  auto fake = std::make_shared<FakeNccl>(1);
  auto outcomes = harness::run_ranks(fake, 3, 20000, [&](int rank, NcclBackend &backend) {
    auto world = harness::spec_of(topology::RankList::progression(0, 1, 3), rank, "world group", 1);
    auto fsdp = harness::spec_of(topology::RankList::progression(0, 1, 3), rank, "fsdp group", 2);
    backend.register_world(world);
    backend.prepare_family(fsdp, 0);
    auto a = backend.create_communicator(world);
    auto b = backend.create_communicator(fsdp);
    if (comm_of(*a) != comm_of(*b)) (xffl::fail)(XFFL_EINTERNAL, "fsdp does not share the world communicator");
    if (backend.splits_called() != 0 || backend.communicators_created() != 1)
      (xffl::fail)(XFFL_EINTERNAL, "splits ", backend.splits_called(), " created ", backend.communicators_created());
  });
  assert_all_ok(outcomes);
}

// Process groups made and destroyed again and again by their members: each gets a new serial, so its
// NCCL id goes under a key of its own in the write-once store (a reused key would be refused, or
// would hand a member the id of a group that no longer exists).
void churned_groups_get_fresh_ids(void **) {
  auto fake = std::make_shared<FakeNccl>(1);
  constexpr int kRounds = 40;
  auto outcomes = harness::run_ranks(fake, 3, 20000, [&](int rank, NcclBackend &backend) {
    if (rank == 1) return;
    std::vector<uint64_t> serials;
    for (int round = 0; round < kRounds; ++round) {
      const xffl::comm::GroupIdentity identity = backend.claim_group({0, 2}, static_cast<uint32_t>(round));
      auto spec = harness::spec_of(topology::RankList::explicit_ranks({0, 2}), rank, "pair",
                                   (1ull << 19) + identity.slot);
      spec.serial = identity.serial;
      {
        auto group = backend.create_communicator(spec);
        int value = rank + round, sum = -1;
        group->allreduce(&value, &sum, 1, XFFL_I32, XFFL_SUM, nullptr);
        if (sum != 2 + 2 * round) (xffl::fail)(XFFL_EINTERNAL, "round ", round, ": sum ", sum);
      }
      backend.release_group(identity.slot);
      for (uint64_t seen : serials)
        if (seen == identity.serial) (xffl::fail)(XFFL_EINTERNAL, "serial ", seen, " handed out twice");
      serials.push_back(identity.serial);
    }
  });
  assert_all_ok(outcomes);
  assert_int_equal(fake->count("get_unique_id", 0), kRounds + 1);  // the world's id, then each group's
  assert_int_equal(fake->count("init", 2), kRounds);
}

// xffl_set_fsdp_mesh: every rank of W = 8 gives its own mesh, in its own order ({0,2,4,6} and {1,3,5,7}
// listed differently by each member); the plan sorts them, so every member splits with colour = the
// smallest rank and key = its sorted index, and each group really is its members.
void caller_fsdp_meshes_split_by_their_smallest_rank(void **) {
  auto fake = std::make_shared<FakeNccl>(1);
  const int world = 8;
  std::vector<int> colours(world, -1);
  auto outcomes = harness::run_ranks(fake, world, 20000, [&](int rank, NcclBackend &backend) {
    std::vector<int> mesh;
    for (int j = 0; j < 4; ++j) mesh.push_back((rank % 2) + 2 * ((rank / 2 + j) % 4));  // starts at the caller
    const topology::RankPlan plan = topology::plan_fsdp_mesh(world, mesh, rank);
    backend.register_world(harness::spec_of(topology::RankList::progression(0, 1, world), rank, "world group", 1));
    auto fsdp = harness::spec_of(*plan.fsdp_group, rank, "fsdp group", 2);
    colours[static_cast<size_t>(rank)] =
        nccl::decide_family(fsdp.members, fsdp.my_index, world, false).color;
    backend.prepare_family(fsdp, 0);
    auto group = backend.create_communicator(fsdp);
    int value = rank, gathered[4] = {-1, -1, -1, -1};
    group->allgather(&value, gathered, 1, XFFL_I32, nullptr);
    for (int j = 0; j < 4; ++j)
      if (gathered[j] != rank % 2 + 2 * j)
        (xffl::fail)(XFFL_EINTERNAL, "rank ", rank, ": member ", j, " of its fsdp group is ", gathered[j]);
  });
  assert_all_ok(outcomes);
  for (int rank = 0; rank < world; ++rank) {
    assert_int_equal(colours[static_cast<size_t>(rank)], rank % 2);
    assert_int_equal(fake->count("split", rank), 1);
  }
}

void member_only_groups_get_their_own_id(void **) {
  auto fake = std::make_shared<FakeNccl>(1);
  std::atomic<int> made{0};
  auto outcomes = harness::run_ranks(fake, 4, 20000, [&](int rank, NcclBackend &backend) {
    if (rank != 3 && rank != 1) return;  // only members call: ranks 0 and 2 never take part
    const xffl::comm::GroupIdentity identity = backend.claim_group({1, 3}, 0);
    auto spec = harness::spec_of(topology::RankList::explicit_ranks({3, 1}), rank, "custom group",
                                 (1ull << 19) + identity.slot);
    spec.serial = identity.serial;
    auto group = backend.create_communicator(spec);
    int value = rank * 10, gathered[2] = {-1, -1};
    group->allgather(&value, gathered, 1, XFFL_I32, nullptr);
    if (gathered[0] != 30 || gathered[1] != 10)
      (xffl::fail)(XFFL_EINTERNAL, "gathered ", gathered[0], ",", gathered[1], " in member order 3,1");
    ++made;
  });
  assert_all_ok(outcomes);
  assert_int_equal(made.load(), 2);
  assert_int_equal(fake->count("get_unique_id", 3), 1);  // member index 0 makes the id
  assert_int_equal(fake->count("get_unique_id", 1), 0);
  assert_int_equal(fake->count("init", 1), 1);
  assert_int_equal(fake->count("split", 1), 0);
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(decisions_follow_the_partition),
      cmocka_unit_test(federated_hsdp_families_split_once_each_and_share),
      cmocka_unit_test(fsdp_over_the_world_shares_the_world_communicator),
      cmocka_unit_test(member_only_groups_get_their_own_id),
      cmocka_unit_test(churned_groups_get_fresh_ids),
      cmocka_unit_test(caller_fsdp_meshes_split_by_their_smallest_rank),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
