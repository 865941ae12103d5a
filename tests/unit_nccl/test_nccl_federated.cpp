// Federated averaging on the NCCL backend, on the fake NCCL with threads as ranks (DESIGN.md 3.3:
// W = 12, F = (4, 8), S = 2): FedAvg weights fused into the senders' allreduce as one PreMulSum per
// call (no pass over device memory), and _many's buckets in device memory from the stream-ordered
// allocator, copied on the stream. Non-senders start from garbage, so a missing relay shows.

#include <cmath>
#include <vector>

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
using harness::FederatedRank;

constexpr int kWorld = 12;

FederatedRank make_federated_rank(NcclBackend &backend, int rank, const std::vector<double> &weights) {
  return harness::make_federated_rank(backend, rank, kWorld, {4, 8}, 2, weights);
}

void fill(std::vector<float> &buf, const FederatedRank &me) { harness::fill(buf, me.roles); }

void check_weighted_average(bool in_progress) {
  auto fake = std::make_shared<FakeNccl>(1);
  fake->set_collectives_in_progress(in_progress);
  const std::vector<double> weights{1.0, 3.0};  // facility 1 counts three times as much
  auto outcomes = harness::run_ranks(fake, kWorld, 20000, [&](int rank, NcclBackend &backend) {
    FederatedRank me = make_federated_rank(backend, rank, weights);
    std::vector<float> shard(1001);
    fill(shard, me);
    me.strategy->average(me.roles, shard.data(), shard.size(), XFFL_F32, nullptr);
    for (size_t i = 0; i < shard.size(); ++i) {
      const float expected = (1.0f * facility_value(0, i) + 3.0f * facility_value(1, i)) / 4.0f;
      if (shard[i] != expected)
        (xffl::fail)(XFFL_EINTERNAL, "rank ", rank, ": element ", i, " is ", shard[i], ", not ", expected);
    }
  });
  assert_all_ok(outcomes);
  // Senders (0, 3, 4, 7): one PreMulSum made and destroyed, the scalar w_f / sum(w), used by the allreduce.
  for (int rank : {0, 3, 4, 7}) {
    int created = 0, destroyed = 0;
    for (const auto &call : fake->calls()) {
      if (call.rank != rank) continue;
      if (call.name == "premul_create") {
        ++created;
        assert_true(call.type == nccl::kNcclFloat32);
        assert_true(call.scalar == (rank < 4 ? 0.25 : 0.75));
      }
      if (call.name == "premul_destroy") ++destroyed;
      if (call.name == "allreduce" && call.count == 1001) assert_true(call.op > nccl::kNcclAvg);
      assert_true(call.name != "copy");  // nothing staged, nothing scaled in a separate pass
    }
    assert_int_equal(created, 1);
    assert_int_equal(destroyed, 1);
  }
  for (int rank : {1, 2, 5, 6, 8, 9, 10, 11}) assert_int_equal(fake->count("premul_create", rank), 0);
}

void weights_become_one_premulsum_per_call(void **) { check_weighted_average(false); }

// A nonblocking communicator may answer the enqueue with ncclInProgress: the operator outlives it.
void weights_survive_an_enqueue_in_progress(void **) { check_weighted_average(true); }

void unweighted_average_stays_native_avg(void **) {
  auto fake = std::make_shared<FakeNccl>(1);
  auto outcomes = harness::run_ranks(fake, kWorld, 20000, [&](int rank, NcclBackend &backend) {
    FederatedRank me = make_federated_rank(backend, rank, {});
    std::vector<float> shard(64);
    fill(shard, me);
    me.strategy->average(me.roles, shard.data(), shard.size(), XFFL_F32, nullptr);
    for (size_t i = 0; i < shard.size(); ++i)
      if (shard[i] != (facility_value(0, i) + facility_value(1, i)) / 2)
        (xffl::fail)(XFFL_EINTERNAL, "rank ", rank, ": element ", i, " is ", shard[i]);
  });
  assert_all_ok(outcomes);
  for (const auto &call : fake->calls()) {
    assert_true(call.name != "premul_create");
    if (call.name == "allreduce" && call.count == 64) assert_int_equal(call.op, nccl::kNcclAvg);
  }
}

void weights_on_integers_are_refused_with_the_dtype(void **) {
  auto fake = std::make_shared<FakeNccl>(1);
  auto outcomes = harness::run_ranks(fake, kWorld, 20000, [&](int rank, NcclBackend &backend) {
    FederatedRank me = make_federated_rank(backend, rank, {1.0, 2.0});
    int values[4] = {1, 2, 3, 4};
    me.strategy->average(me.roles, values, 4, XFFL_I32, nullptr);
  });
  // Every rank refuses, non-senders too: had only the senders (who scale) refused, the others would
  // wait for their relay until the timeout. Nothing reaches NCCL.
  for (int rank = 0; rank < kWorld; ++rank) {
    assert_int_equal(outcomes[static_cast<size_t>(rank)].status, XFFL_EINVAL);
    assert_non_null(strstr(outcomes[static_cast<size_t>(rank)].message.c_str(), "i32"));
  }
  for (const auto &call : fake->calls())
    assert_true(call.name != "premul_create" && call.name != "allreduce" && call.name != "broadcast");
}

// A compressed wire format quantises on the host: on device memory whose FEDERATED groups run on NCCL
// itself (no host crossing backend) every rank refuses f32 data (XFFL_EUNSUPPORTED naming the format
// and the way out) before anything reaches NCCL; other dtypes travel exact. With a host crossing backend
// the hop is staged instead (test_nccl_crossing.cpp).
void compressed_wire_formats_are_refused_on_nccl_crossing_groups(void **) {
  auto fake = std::make_shared<FakeNccl>(1);
  auto outcomes = harness::run_ranks(fake, kWorld, 20000, [&](int rank, NcclBackend &backend) {
    FederatedRank me = make_federated_rank(backend, rank, {});
    me.roles.wire_format = XFFL_WIRE_INT8_BLOCK;
    me.roles.device_memory = true;
    me.roles.host_crossing = backend.crossing_on_host();  // false: no crossing backend
    std::vector<float> shard(1001);
    fill(shard, me);
    me.strategy->average(me.roles, shard.data(), shard.size(), XFFL_F32, nullptr);
  });
  for (int rank = 0; rank < kWorld; ++rank) {
    assert_int_equal(outcomes[static_cast<size_t>(rank)].status, XFFL_EUNSUPPORTED);
    assert_non_null(strstr(outcomes[static_cast<size_t>(rank)].message.c_str(), "int8_block"));
    assert_non_null(strstr(outcomes[static_cast<size_t>(rank)].message.c_str(), "XFFL_OPT_CROSS_FACILITY_BACKEND"));
  }
  for (const auto &call : fake->calls()) assert_true(call.name != "allreduce" && call.name != "broadcast");

  auto exact = harness::run_ranks(fake, kWorld, 20000, [&](int rank, NcclBackend &backend) {
    FederatedRank me = make_federated_rank(backend, rank, {});
    me.roles.wire_format = XFFL_WIRE_INT8_BLOCK;
    me.roles.device_memory = true;
    std::vector<double> shard(101);
    for (size_t i = 0; i < shard.size(); ++i) shard[i] = me.roles.is_sender ? facility_value(me.roles.federated_rank, i) : -1;
    me.strategy->average(me.roles, shard.data(), shard.size(), XFFL_F64, nullptr);
    for (size_t i = 0; i < shard.size(); ++i)
      if (shard[i] != (static_cast<double>(facility_value(0, i)) + facility_value(1, i)) / 2)
        (xffl::fail)(XFFL_EINTERNAL, "rank ", rank, ": f64 element ", i, " is ", shard[i]);
  });
  assert_all_ok(exact);
}

// Small buffers share one device bucket (allocated once, on the stream, sized to what it carries);
// a buffer of 16 MiB or more is averaged in place.
void many_coalesces_small_device_buffers_into_one_bucket(void **) {
  auto fake = std::make_shared<FakeNccl>(1);
  const std::vector<size_t> counts{3, 1000, 0, (size_t{16} << 20) / 4 + 1, 7};
  auto outcomes = harness::run_ranks(fake, kWorld, 60000, [&](int rank, NcclBackend &backend) {
    FederatedRank me = make_federated_rank(backend, rank, {});
    std::vector<std::vector<float>> buffers;
    std::vector<void *> bufs;
    for (size_t count : counts) {
      buffers.emplace_back(count);
      fill(buffers.back(), me);
    }
    for (auto &buffer : buffers) bufs.push_back(buffer.data());
    me.strategy->average_many(me.roles, bufs.data(), counts.data(), counts.size(), XFFL_F32, nullptr);
    for (size_t b = 0; b < buffers.size(); ++b)
      for (size_t i = 0; i < buffers[b].size(); ++i)
        if (buffers[b][i] != (facility_value(0, i) + facility_value(1, i)) / 2)
          (xffl::fail)(XFFL_EINTERNAL, "rank ", rank, ": buffer ", b, " element ", i, " is ", buffers[b][i]);
  });
  assert_all_ok(outcomes);
  const size_t bucket = (3 + 1000 + 7) * sizeof(float);
  for (int rank = 0; rank < kWorld; ++rank) {
    size_t allocated = 0;
    int reductions = 0, relays = 0;
    nccl::Stream alloc_stream = nullptr, free_stream = nullptr;
    for (const auto &call : fake->calls()) {
      if (call.rank != rank) continue;
      if (call.name == "alloc_async") allocated = call.count, alloc_stream = call.stream;
      if (call.name == "free_async") free_stream = call.stream;
      if (call.name == "allreduce") ++reductions;
      if (call.name == "broadcast") ++relays;
    }
    assert_int_equal(fake->count("alloc_async", rank), 1);
    assert_int_equal(fake->count("free_async", rank), 1);
    assert_int_equal(allocated, bucket);
    assert_non_null(alloc_stream);
    assert_ptr_equal(alloc_stream, free_stream);
    // In: 3 small buffers; out: the same 3. The big one and the empty one are never copied.
    assert_int_equal(fake->count("copy", rank), 6);
    const bool sender = rank == 0 || rank == 3 || rank == 4 || rank == 7;
    assert_int_equal(reductions, sender ? 2 : 0);  // one bucket + the big buffer
    assert_int_equal(relays, 2);                    // every replica group relays both
  }
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(weights_become_one_premulsum_per_call),
      cmocka_unit_test(weights_survive_an_enqueue_in_progress),
      cmocka_unit_test(unweighted_average_stays_native_avg),
      cmocka_unit_test(weights_on_integers_are_refused_with_the_dtype),
      cmocka_unit_test(many_coalesces_small_device_buffers_into_one_bucket),
      cmocka_unit_test(compressed_wire_formats_are_refused_on_nccl_crossing_groups),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
