// XFFL_OPT_CROSS_FACILITY_BACKEND=UCX: groups that cross facilities run on UCX through pinned host
// memory while the others stay on NCCL. Threads as ranks, the fake NCCL for the device side (its
// "device" memory is host memory) and real UCX backends over loopback/shared memory for the host side.
// Layout: spec 5.5, W = 6, F = (2, 4), S = 2; senders 0, 1 (facility 0) and 2, 5 (facility 1).

#include <cmath>
#include <cstring>
#include <vector>

#include "comm/nccl/host_staged_communicator.h"
#include "comm/ucx/ucx_backend.h"
#include "comm/wan/wan_backend.h"
#include "federated/wire/error_feedback.h"
#include "federated/wire/wan_hop.h"
#include "federated/wire/wire_format.h"
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

// The compressed WAN hop on device memory (XFFL_OPT_WIRE_FORMAT with a host crossing backend): staged
// through host memory, quantised once, all-gathered over UCX, decoded and summed on the host.
constexpr size_t kShard = 1001;  // not a whole number of blocks: the tail block too

// Facility f's values, with signs and magnitudes that vary within a block.
float wide_value(int facility, size_t i) {
  const float magnitude = static_cast<float>(1 + (i * 37 + static_cast<size_t>(facility) * 11) % 199) / 7.0f;
  return (i % 3 == 0 ? -magnitude : magnitude) + static_cast<float>(facility);
}

void fill_wide(std::vector<float> &buf, const federated::Roles &roles) {
  for (size_t i = 0; i < buf.size(); ++i) buf[i] = roles.is_sender ? wide_value(roles.federated_rank, i) : -777.0f;
}

// Bound of |mean - exact| for one round: each facility's copy (factor_f x_f) is off by at most the
// codec's relative error times |factor_f x_f[i]| (float formats) or its block's largest |factor_f x_f|
// (block formats); the mean of the two is off by at most the larger, plus f32 rounding of the sum.
double round_bound(const federated::wire::Codec &codec, const double factor[2], size_t i, size_t count = kShard) {
  double worst = 0;
  for (int f = 0; f < 2; ++f) {
    double reach = std::fabs(factor[f] * wide_value(f, i));
    if (codec.block) {
      const size_t first = i / codec.block * codec.block;
      for (size_t j = first; j < first + codec.block && j < count; ++j)
        reach = std::max(reach, std::fabs(factor[f] * wide_value(f, j)));
    }
    worst = std::max(worst, codec.relative_error * reach);
  }
  return worst + 1e-5;
}

double exact_mean(const double factor[2], size_t i) {
  return (factor[0] * wide_value(0, i) + factor[1] * wide_value(1, i)) / 2;
}

// Every rank's shard after the averages (rank, element), and each facility's FedAvg factor.
struct StagedRun {
  std::vector<std::vector<float>> shards = std::vector<std::vector<float>>(kWorld);
  double factor[2] = {0, 0};
  size_t residual_bytes[kWorld] = {};
};

// `rounds` averages of the same inputs on device memory over host-staged crossing groups; with
// error_feedback the shards hold the sum over rounds of the results.
// wire_roles false: the roles as they were before wire formats (nothing set), for comparison.
StagedRun run_staged(CrossingJob &job, xffl_wire_format_t format, bool error_feedback, int rounds,
                     bool wire_roles = true, size_t count = kShard) {
  StagedRun run;
  auto outcomes = job.run([&](int rank, NcclBackend &backend) {
    FederatedRank me = make_federated_rank(backend, rank, {1.0, 3.0});
    federated::wire::ErrorFeedback residuals;
    federated::Averaging averaging{me.strategy, me.roles};
    if (wire_roles) {
      averaging.roles.wire_format = format;
      averaging.roles.device_memory = true;
      averaging.roles.host_crossing = backend.crossing_on_host();  // as DistributedState sets it
      averaging.roles.error_feedback = error_feedback ? &residuals : nullptr;
    }
    if (rank == 0 || rank == 2) run.factor[me.roles.federated_rank] = me.roles.weight_factor;  // group {0, 2}
    std::vector<float> shard(count), total(count, 0.0f);
    for (int round = 0; round < rounds; ++round) {
      fill_wide(shard, me.roles);
      averaging.average(shard.data(), shard.size(), XFFL_F32, nullptr);
      for (size_t i = 0; i < count; ++i) total[i] += shard[i];
    }
    run.shards[static_cast<size_t>(rank)] = rounds == 1 ? shard : total;
    run.residual_bytes[rank] = residuals.bytes();
  });
  assert_all_ok(outcomes);
  return run;
}

void check_bit_identical(const StagedRun &run, const char *what) {
  for (int rank = 1; rank < kWorld; ++rank)
    if (run.shards[0] != run.shards[static_cast<size_t>(rank)])
      fail_msg("%s: rank %d's mean differs from rank 0's", what, rank);
}

void compressed_formats_cross_staged_through_host_memory(void **) {
  for (xffl_wire_format_t format : {XFFL_WIRE_BF16, XFFL_WIRE_INT8_BLOCK}) {
    const federated::wire::Codec &codec = federated::wire::codec(format);
    CrossingJob job;
    const StagedRun run = run_staged(job, format, false, 1);
    check_bit_identical(run, codec.name);
    size_t rounded = 0;  // the format really applied: some values are not the f32 mean
    for (size_t i = 0; i < kShard; ++i) {
      rounded += run.shards[0][i] != static_cast<float>(exact_mean(run.factor, i));
      const double error = std::fabs(run.shards[0][i] - exact_mean(run.factor, i));
      if (!(error <= round_bound(codec, run.factor, i)))
        fail_msg("%s: element %zu is %.9g, %.3g from the exact mean (bound %.3g)", codec.name, i, run.shards[0][i],
                 error, round_bound(codec, run.factor, i));
    }
    if (rounded == 0) fail_msg("%s: every value is the exact f32 mean: nothing was quantised", codec.name);
    for (int rank = 0; rank < kWorld; ++rank) {
      int nccl_reductions = 0, relays = 0;
      for (const auto &call : job.fake->calls())
        if (call.rank == rank) {
          nccl_reductions += call.name == "allreduce" || call.name == "premul_create" || call.name == "allgather";
          relays += call.name == "broadcast";
        }
      assert_int_equal(nccl_reductions, 0);        // the compressed bytes crossed over UCX, never NCCL
      assert_int_equal(relays, rank < 2 ? 0 : 1);  // the f32 relay stayed on NCCL
      // Senders: the shard to the host, the mean back, through the staging's one pinned buffer.
      assert_int_equal(job.fake->count("copy", rank), is_sender(rank) ? 2 : 0);
      assert_int_equal(job.fake->count("host_alloc", rank), is_sender(rank) ? 1 : 0);
    }
  }
}

// A model of two staging windows (federated/wire/wan_hop.h, kStagedWindowValues) streams: each window
// goes to the host and is encoded as its bytes are about to leave, and comes back decoded as soon as
// they are in; one copy each way per window, through the staging's one pinned buffer, and the mean
// bit-identical on every rank and within the format's bound at each window's edges.
void a_staged_model_of_two_windows_crosses_window_by_window(void **) {
  const size_t window = federated::wire::kStagedWindowValues;
  const size_t count = window + kShard;  // a whole window and a short one, whose tail block is short
  const federated::wire::Codec &codec = federated::wire::codec(XFFL_WIRE_INT8_BLOCK);
  CrossingJob job;
  const StagedRun run = run_staged(job, XFFL_WIRE_INT8_BLOCK, false, 1, true, count);
  check_bit_identical(run, "int8_block, two windows");
  std::vector<size_t> checked;
  for (size_t i = 0; i < count; i += 4099) checked.push_back(i);
  for (size_t edge : {window, count})
    for (size_t i = edge - 300; i < edge + 300 && i < count; ++i) checked.push_back(i);
  for (size_t i : checked) {
    const double error = std::fabs(run.shards[0][i] - exact_mean(run.factor, i));
    if (!(error <= round_bound(codec, run.factor, i, count)))
      fail_msg("two windows: element %zu is %.9g, %.3g from the exact mean (bound %.3g)", i, run.shards[0][i], error,
               round_bound(codec, run.factor, i, count));
  }
  for (int rank = 0; rank < kWorld; ++rank) {
    assert_int_equal(job.fake->count("copy", rank), is_sender(rank) ? 4 : 0);
    assert_int_equal(job.fake->count("host_alloc", rank), is_sender(rank) ? 1 : 0);
  }
}

// F32 with a host crossing backend is the exact staged allreduce, bit for bit what it was before
// wire formats (roles without them), and the same on every rank.
void f32_stays_exact_with_host_crossing(void **) {
  CrossingJob job, before_job;
  const StagedRun run = run_staged(job, XFFL_WIRE_F32, false, 1);
  const StagedRun before = run_staged(before_job, XFFL_WIRE_F32, false, 1, /*wire_roles=*/false);
  check_bit_identical(run, "f32");
  for (int rank = 0; rank < kWorld; ++rank)
    if (std::memcmp(run.shards[static_cast<size_t>(rank)].data(), before.shards[static_cast<size_t>(rank)].data(),
                    kShard * sizeof(float)) != 0)
      fail_msg("f32: rank %d's mean differs from the plain staged allreduce's", rank);
  for (size_t i = 0; i < kShard; ++i) {  // and it is the weighted mean, to f32 rounding
    const double expected = exact_mean(run.factor, i);
    if (!(std::fabs(run.shards[0][i] - expected) <= 1e-6 * (1 + std::fabs(expected))))
      fail_msg("f32: element %zu is %.9g, not %.9g", i, run.shards[0][i], expected);
  }
  for (int rank = 0; rank < kWorld; ++rank) assert_int_equal(job.fake->count("copy", rank), is_sender(rank) ? 2 : 0);
}

// With error feedback the residuals stay on the host of each sender, and over many rounds of the same
// inputs the summed means track rounds x the exact mean within one round's bound (without, the same
// rounding repeats every round and adds up).
void error_feedback_keeps_the_staged_sum_bounded(void **) {
  constexpr int kRounds = 24;
  const federated::wire::Codec &codec = federated::wire::codec(XFFL_WIRE_INT8_BLOCK);
  CrossingJob with_job, without_job;
  const StagedRun with = run_staged(with_job, XFFL_WIRE_INT8_BLOCK, true, kRounds);
  const StagedRun without = run_staged(without_job, XFFL_WIRE_INT8_BLOCK, false, kRounds);
  check_bit_identical(with, "int8_block with error feedback");
  double worst_with = 0, worst_without = 0;
  for (size_t i = 0; i < kShard; ++i) {
    const double expected = kRounds * exact_mean(with.factor, i);
    const double error = std::fabs(with.shards[0][i] - expected);
    worst_with = std::max(worst_with, error);
    worst_without = std::max(worst_without, std::fabs(without.shards[0][i] - expected));
    // -mean(final residuals) is within one round's bound (10% more: a residual is a rounding of the input
    // plus the last residual); f32 sums of kRounds means add their rounding.
    const double bound = 1.1 * round_bound(codec, with.factor, i) + kRounds * 4e-7 * std::fabs(expected);
    if (!(error <= bound))
      fail_msg("error feedback: element %zu summed to %.9g, %.3g from %.9g (bound %.3g)", i, with.shards[0][i], error,
               expected, bound);
  }
  if (!(worst_with < worst_without))
    fail_msg("error feedback did not help: worst %.3g with, %.3g without", worst_with, worst_without);
  for (int rank = 0; rank < kWorld; ++rank)
    assert_int_equal(with.residual_bytes[rank], is_sender(rank) ? kShard * sizeof(float) : 0);
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
      cmocka_unit_test(compressed_formats_cross_staged_through_host_memory),
      cmocka_unit_test(a_staged_model_of_two_windows_crosses_window_by_window),
      cmocka_unit_test(f32_stays_exact_with_host_crossing),
      cmocka_unit_test(error_feedback_keeps_the_staged_sum_bounded),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
