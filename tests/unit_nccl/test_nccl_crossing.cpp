// XFFL_OPT_CROSS_FACILITY_BACKEND=UCX: groups that cross facilities run on UCX through pinned host
// memory while the others stay on NCCL. Threads as ranks, the fake NCCL for the device side (its
// "device" memory is host memory) and real UCX backends over loopback/shared memory for the host side.
// Layout: spec 5.5, W = 6, F = (2, 4), S = 2; senders 0, 1 (facility 0) and 2, 5 (facility 1).

#include <cmath>
#include <vector>

#include "comm/nccl/host_staged_communicator.h"
#include "comm/ucx/ucx_backend.h"
#include "comm/wan/wan_backend.h"
#include "federated_rank.h"

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

using harness::facility_value;
using harness::fill;
using harness::FederatedRank;

constexpr int kWorld = 6;

bool is_sender(int rank) { return rank == 0 || rank == 1 || rank == 2 || rank == 5; }

// Every rank's NCCL backend gets a UCX backend of its own for the crossing groups.
struct CrossingJob {
  std::shared_ptr<FakeNccl> fake = std::make_shared<FakeNccl>(1);
  harness::MemoryExchange ucx_exchange;
  int timeout_ms = 20000;

  std::vector<harness::Outcome> run(const std::function<void(int, NcclBackend &)> &body) {
    return harness::run_ranks(fake, kWorld, timeout_ms, [&](int rank, NcclBackend &backend) {
      backend.set_crossing_backend(std::make_shared<UcxBackend>(rank, kWorld, ucx_exchange, timeout_ms, XFFL_LOG_ERROR));
      body(rank, backend);
    });
  }
};

FederatedRank make_federated_rank(NcclBackend &backend, int rank, const std::vector<double> &weights) {
  return harness::make_federated_rank(backend, rank, kWorld, {2, 4}, 2, weights, /*crossing=*/true);
}

void check_mean(const std::vector<float> &buf, int rank, double w0, double w1, const char *what) {
  for (size_t i = 0; i < buf.size(); ++i) {
    const float expected = static_cast<float>((w0 * facility_value(0, i) + w1 * facility_value(1, i)) / (w0 + w1));
    if (buf[i] != expected)
      (xffl::fail)(XFFL_EINTERNAL, what, ": rank ", rank, " element ", i, " is ", buf[i], ", not ", expected);
  }
}

void crossing_families_are_never_split(void **) {
  CrossingJob job;
  std::vector<int> splits(kWorld);
  auto outcomes = job.run([&](int rank, NcclBackend &backend) {
    FederatedRank me = make_federated_rank(backend, rank, {});
    const bool staged = dynamic_cast<nccl::HostStagedCommunicator *>(me.federated.get()) != nullptr;
    if (staged != is_sender(rank))  // non-senders are alone in their federated group: a device copy
      (xffl::fail)(XFFL_EINTERNAL, "rank ", rank, ": federated group staged ", staged);
    splits[static_cast<size_t>(rank)] = backend.splits_called();
  });
  assert_all_ok(outcomes);
  for (int rank = 0; rank < kWorld; ++rank) assert_int_equal(splits[static_cast<size_t>(rank)], 1);  // replica only
}

void weighted_average_crosses_over_ucx_and_relays_over_nccl(void **) {
  CrossingJob job;
  auto outcomes = job.run([&](int rank, NcclBackend &backend) {
    FederatedRank me = make_federated_rank(backend, rank, {1.0, 3.0});
    std::vector<float> shard(1001);
    fill(shard, me.roles);
    me.strategy->average(me.roles, shard.data(), shard.size(), XFFL_F32, nullptr);
    check_mean(shard, rank, 1.0, 3.0, "weighted average");
  });
  assert_all_ok(outcomes);
  for (int rank = 0; rank < kWorld; ++rank) {
    int nccl_reductions = 0, relays = 0;
    for (const auto &call : job.fake->calls())
      if (call.rank == rank) {
        nccl_reductions += call.name == "allreduce" || call.name == "premul_create";
        relays += call.name == "broadcast";
      }
    assert_int_equal(nccl_reductions, 0);  // the cross-facility reduction never touched NCCL
    assert_int_equal(relays, rank < 2 ? 0 : 1);  // the replica relay did (facility 0 has one replica)
    assert_int_equal(job.fake->count("host_alloc", rank), is_sender(rank) ? 1 : 0);
    assert_int_equal(job.fake->count("copy", rank), is_sender(rank) ? 2 : 0);  // to the host and back
  }
}

// XFFL_CROSS_FACILITY_BACKEND=wan under NCCL: the same staging, the crossing groups over the striped,
// encrypted TCP transport.
void weighted_average_crosses_over_wan_and_relays_over_nccl(void **) {
  auto fake = std::make_shared<FakeNccl>(1);
  auto exchange = std::make_shared<harness::MemoryExchange>();
  auto outcomes = harness::run_ranks(fake, kWorld, 20000, [&](int rank, NcclBackend &backend) {
    wan::WanSettings settings;
    settings.rank = rank;
    settings.world_size = kWorld;
    settings.timeout_ms = 20000;
    settings.streams = 3;
    settings.encryption = XFFL_WAN_ENCRYPTION_AES_256_GCM;
    settings.secret = "nccl-wan-secret";
    settings.job_id = "nccl-wan";
    settings.store_host = "127.0.0.1";
    backend.set_crossing_backend(std::make_shared<WanBackend>(settings, exchange));
    FederatedRank me = make_federated_rank(backend, rank, {1.0, 3.0});
    std::vector<float> shard(300007);  // the ring, several frames per chunk
    fill(shard, me.roles);
    me.strategy->average(me.roles, shard.data(), shard.size(), XFFL_F32, nullptr);
    check_mean(shard, rank, 1.0, 3.0, "weighted average over wan");
  });
  assert_all_ok(outcomes);
  for (int rank = 0; rank < kWorld; ++rank) {
    int nccl_reductions = 0;
    for (const auto &call : fake->calls())
      if (call.rank == rank) nccl_reductions += call.name == "allreduce" || call.name == "premul_create";
    assert_int_equal(nccl_reductions, 0);  // the cross-facility reduction never touched NCCL
  }
}

void many_buckets_stay_on_the_device_side(void **) {
  CrossingJob job;
  const std::vector<size_t> counts{3, 1000, 7};
  auto outcomes = job.run([&](int rank, NcclBackend &backend) {
    FederatedRank me = make_federated_rank(backend, rank, {});
    std::vector<std::vector<float>> buffers;
    std::vector<void *> bufs;
    for (size_t count : counts) {
      buffers.emplace_back(count);
      fill(buffers.back(), me.roles);
    }
    for (auto &buffer : buffers) bufs.push_back(buffer.data());
    me.strategy->average_many(me.roles, bufs.data(), counts.data(), counts.size(), XFFL_F32, nullptr);
    for (const auto &buffer : buffers) check_mean(buffer, rank, 1, 1, "_many");
  });
  assert_all_ok(outcomes);
  for (int rank = 0; rank < kWorld; ++rank) {
    assert_int_equal(job.fake->count("alloc_async", rank), 1);  // one device bucket
    assert_int_equal(job.fake->count("free_async", rank), 1);
  }
}

// Every collective of a staged group (what xffl_allreduce & co. do on a FEDERATED group), and a process
// group spanning facilities made without a family.
void staged_collectives_match_their_definitions(void **) {
  CrossingJob job;
  auto outcomes = job.run([&](int rank, NcclBackend &backend) {
    FederatedRank me = make_federated_rank(backend, rank, {});
    if (!is_sender(rank)) return;
    Communicator &group = *me.federated;  // {0, 2} or {1, 5}
    const int index = rank < 2 ? 0 : 1;
    const float mine = static_cast<float>(rank + 1);
    const float peer = static_cast<float>((rank == 0 ? 2 : rank == 2 ? 0 : rank == 1 ? 5 : 1) + 1);
    std::vector<float> send(4, mine), recv(8, 0);
    group.allreduce(send.data(), recv.data(), 4, XFFL_F32, XFFL_SUM, nullptr);
    if (recv[3] != mine + peer) (xffl::fail)(XFFL_EINTERNAL, "allreduce: ", recv[3]);
    group.allgather(send.data(), recv.data(), 4, XFFL_F32, nullptr);
    if (recv[static_cast<size_t>(index) * 4] != mine || recv[static_cast<size_t>(1 - index) * 4 + 3] != peer)
      (xffl::fail)(XFFL_EINTERNAL, "allgather: ", recv[0], " ", recv[4]);
    std::vector<float> both(8, mine);
    group.reduce_scatter(both.data(), recv.data(), 4, XFFL_F32, XFFL_MAX, nullptr);
    if (recv[0] != std::max(mine, peer)) (xffl::fail)(XFFL_EINTERNAL, "reduce_scatter: ", recv[0]);
    std::vector<float> from_root(5, mine);
    group.broadcast(from_root.data(), 5, XFFL_F32, 1, nullptr);
    if (from_root[4] != (index == 1 ? mine : peer)) (xffl::fail)(XFFL_EINTERNAL, "broadcast: ", from_root[4]);
    group.barrier();
  });
  assert_all_ok(outcomes);

  CrossingJob custom;
  outcomes = custom.run([&](int rank, NcclBackend &backend) {
    backend.select_device(-1, rank, 1);
    if (rank != 0 && rank != 3 && rank != 4) return;
    GroupSpec spec = harness::spec_of(topology::RankList::explicit_ranks({0, 3, 4}), rank, "process group", 1 << 19);
    spec.crosses_facilities = true;
    auto group = backend.create_communicator(spec);
    float value = static_cast<float>(rank);
    group->allreduce(&value, &value, 1, XFFL_F32, XFFL_SUM, nullptr);
    if (value != 7.0f) (xffl::fail)(XFFL_EINTERNAL, "process group allreduce: ", value);
  });
  assert_all_ok(outcomes);
  for (int rank = 0; rank < kWorld; ++rank) assert_int_equal(custom.fake->count("init", rank), 0);  // no NCCL id
}

// Sender 5 never takes part in the average: its partner across facilities (rank 1) ends with
// XFFL_ETIMEOUT or XFFL_EPEER naming rank 5 within the timeout, never a hang; the others finish.
void a_missing_partner_times_out_the_staged_sender(void **) {
  CrossingJob job;
  job.timeout_ms = 1000;
  auto outcomes = job.run([&](int rank, NcclBackend &backend) {
    FederatedRank me = make_federated_rank(backend, rank, {});
    if (rank == 5 || rank == 3) return;  // 5 is away; 3 would wait on 5's relay (its replica group)
    std::vector<float> shard(64);
    fill(shard, me.roles);
    me.strategy->average(me.roles, shard.data(), shard.size(), XFFL_F32, nullptr);
  });
  const harness::Outcome &partner = outcomes[1];
  // Rank 5's thread ends and takes its UCX worker with it: rank 1 either waits out the timeout or
  // finds the shared memory gone when it connects (XFFL_EPEER). Both name rank 5, neither hangs.
  assert_true(partner.status == XFFL_ETIMEOUT || partner.status == XFFL_EPEER);
  if (partner.message.find("rank 5") == std::string::npos || partner.message.find("federated group") == std::string::npos)
    fail_msg("the message does not name rank 5 and the group: %s", partner.message.c_str());
  for (int rank : {0, 2, 4}) assert_int_equal(outcomes[static_cast<size_t>(rank)].status, XFFL_OK);
}

// Options applied to the live NCCL backend (Backend::apply, as xffl_set_option does) reach its crossing
// UCX backend too.
void live_settings_reach_the_crossing_backend(void **) {
  auto fake = std::make_shared<FakeNccl>(1);
  harness::MemoryExchange ucx_exchange;
  std::vector<int> seen(2, 0);
  auto outcomes = harness::run_ranks(fake, 2, 20000, [&](int rank, NcclBackend &backend) {
    auto ucx = std::make_shared<UcxBackend>(rank, 2, ucx_exchange, 20000, XFFL_LOG_ERROR);
    backend.set_crossing_backend(ucx);
    LiveSettings settings;
    settings.timeout_ms = 1234 + rank;
    settings.log_level = XFFL_LOG_ERROR;
    backend.apply(settings);
    if (backend.timeout_ms() != settings.timeout_ms)
      (xffl::fail)(XFFL_EINTERNAL, "rank ", rank, ": NCCL's timeout is ", backend.timeout_ms());
    seen[static_cast<size_t>(rank)] = ucx->timeout_ms();
  });
  for (const harness::Outcome &outcome : outcomes)
    if (outcome.status != XFFL_OK) fail_msg("%s", outcome.message.c_str());
  assert_int_equal(seen[0], 1234);
  assert_int_equal(seen[1], 1235);
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(crossing_families_are_never_split),
      cmocka_unit_test(weighted_average_crosses_over_ucx_and_relays_over_nccl),
      cmocka_unit_test(weighted_average_crosses_over_wan_and_relays_over_nccl),
      cmocka_unit_test(many_buckets_stay_on_the_device_side),
      cmocka_unit_test(staged_collectives_match_their_definitions),
      cmocka_unit_test(a_missing_partner_times_out_the_staged_sender),
      cmocka_unit_test(live_settings_reach_the_crossing_backend),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
