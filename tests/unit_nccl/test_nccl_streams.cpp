// The device choice and the pool of K streams: which device, which stream a NULL-stream collective
// runs on, and what may change once communicators exist.

#include <cstring>
#include <set>

#include "comm/half.h"
#include "comm/nccl/device_streams.h"
#include "nccl_harness.h"

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

void device_is_node_local_rank_modulo_count(void **) {
  assert_int_equal(nccl::choose_device(-1, 5, 4), 1);
  assert_int_equal(nccl::choose_device(-1, 3, 4), 3);
  assert_int_equal(nccl::choose_device(2, 7, 4), 2);
  try {
    nccl::choose_device(4, 0, 4);
    fail_msg("device 4 of 4 accepted");
  } catch (const Error &error) {
    assert_int_equal(error.status(), XFFL_EINVAL);
  }
}

void pool_holds_k_distinct_streams_on_the_chosen_device(void **) {
  auto fake = std::make_shared<FakeNccl>(4);
  auto outcomes = harness::run_ranks(fake, 1, 5000, [&](int, NcclBackend &backend) {
    backend.select_device(-1, 5, 3);
    if (backend.device() != 1) (xffl::fail)(XFFL_EINTERNAL, "device ", backend.device(), " != 1");
    std::set<void *> streams{backend.stream(0), backend.stream(1), backend.stream(2)};
    if (streams.size() != 3 || backend.streams() != 3) (xffl::fail)(XFFL_EINTERNAL, "streams not distinct");
    try {
      backend.stream(3);
      (xffl::fail)(XFFL_EINTERNAL, "stream 3 of 3 handed out");
    } catch (const Error &error) {
      if (error.status() != XFFL_EINVAL) throw;
    }
    backend.select_device(1, 0, 4);  // the same device, more streams: the first three stay
    if (backend.stream(0) != *streams.begin() && !streams.count(backend.stream(0)))
      (xffl::fail)(XFFL_EINTERNAL, "stream 0 replaced");
    if (backend.streams() != 4) (xffl::fail)(XFFL_EINTERNAL, "pool of ", backend.streams());
  });
  assert_all_ok(outcomes);
  assert_int_equal(fake->count("stream_create", 0), 4);
}

void null_stream_runs_on_the_instance_stream(void **) {
  auto fake = std::make_shared<FakeNccl>(1);
  void *pool1 = nullptr, *own = nullptr;
  auto outcomes = harness::run_ranks(fake, 2, 5000, [&](int rank, NcclBackend &backend) {
    backend.select_device(0, 0, 2);
    auto world = harness::spec_of(topology::RankList::progression(0, 1, 2), rank, "world group", 1);
    auto federated = harness::spec_of(topology::RankList::progression(0, 1, 2), rank, "federated (instance 1)", 7);
    backend.register_world(world);
    backend.prepare_family(federated, 1);
    auto group = backend.create_communicator(federated);
    float x = 1, y = 0;
    group->allreduce(&x, &y, 1, XFFL_F32, XFFL_SUM, nullptr);
    void *mine = nullptr;
    fake->stream_create(&mine);
    group->allreduce(&x, &y, 1, XFFL_F32, XFFL_SUM, mine);
    if (y != 2) (xffl::fail)(XFFL_EINTERNAL, "sum ", y);
    if (rank == 0) {
      pool1 = backend.stream(1);
      own = mine;
    }
  });
  assert_all_ok(outcomes);
  std::vector<void *> used;
  for (const auto &call : fake->calls())
    if (call.name == "allreduce" && call.rank == 0) used.push_back(call.stream);
  assert_int_equal(used.size(), 2);
  assert_ptr_equal(used[0], pool1);  // instance 1 -> pool stream 1
  assert_ptr_equal(used[1], own);    // the caller's stream when given
}

void device_cannot_change_once_communicators_exist(void **) {
  auto fake = std::make_shared<FakeNccl>(2);
  auto outcomes = harness::run_ranks(fake, 1, 5000, [&](int rank, NcclBackend &backend) {
    backend.select_device(0, 0, 1);
    auto world = harness::spec_of(topology::RankList::progression(0, 1, 1), rank, "world group", 1);
    backend.register_world(world);
    auto group = backend.create_communicator(world);
    backend.select_device(1, 0, 1);
  });
  assert_int_equal(outcomes[0].status, XFFL_ESTATE);
  assert_non_null(strstr(outcomes[0].message.c_str(), "already exist on CUDA device 0"));
}

// The caller's thread keeps its own current device: every call makes the state's device current for
// its own work (NCCL's calls and the copies run there) and restores the caller's on the way out.
void caller_keeps_its_current_device(void **) {
  auto fake = std::make_shared<FakeNccl>(2);
  auto outcomes = harness::run_ranks(fake, 2, 5000, [&](int rank, NcclBackend &backend) {
    backend.select_device(1, 0, 1);  // like xFFL's set_exec_device, this one makes device 1 current
    auto world = harness::spec_of(topology::RankList::progression(0, 1, 2), rank, "world group", 1);
    backend.register_world(world);
    auto group = backend.create_communicator(world);
    fake->set_device(0);  // the caller works on device 0 meanwhile
    float x = 1, y = 0;
    group->allreduce(&x, &y, 1, XFFL_F32, XFFL_SUM, nullptr);
    void *scratch = group->allocate(64, nullptr);
    group->release(scratch, nullptr);
    if (FakeNccl::current_device() != 0)
      (xffl::fail)(XFFL_EINTERNAL, "the caller's device became ", FakeNccl::current_device());
  });
  assert_all_ok(outcomes);
  int checked = 0;
  for (const auto &call : fake->calls())
    if (call.name == "allreduce" || call.name == "alloc_async" || call.name == "free_async" || call.name == "init") {
      if (call.device != 1) fail_msg("%s on rank %d ran on device %d, not 1", call.name.c_str(), call.rank, call.device);
      ++checked;
    }
  assert_true(checked >= 6);
}

// FedAvg's factor in a 16-bit collective travels in the collective's own type: NCCL reads the
// PreMulSum scalar as f16 or bf16, so the fake decodes it as such and checks the value that arrives.
void half_precision_premulsum_scalars(void **) {
  auto fake = std::make_shared<FakeNccl>(1);
  const uint16_t f16_four = comm::f32_to_f16(4.0f), bf16_four = comm::f32_to_bf16(4.0f);
  std::vector<uint16_t> results(4);
  auto outcomes = harness::run_ranks(fake, 2, 5000, [&](int rank, NcclBackend &backend) {
    backend.select_device(0, 0, 1);
    auto world = harness::spec_of(topology::RankList::progression(0, 1, 2), rank, "world group", 1);
    backend.register_world(world);
    auto group = backend.create_communicator(world);
    uint16_t half = f16_four, brain = bf16_four;
    group->allreduce_scaled(&half, 1, XFFL_F16, XFFL_SUM, 0.5, nullptr);
    group->allreduce_scaled(&brain, 1, XFFL_BF16, XFFL_AVG, 0.5, nullptr);
    results[static_cast<size_t>(2 * rank)] = half;
    results[static_cast<size_t>(2 * rank + 1)] = brain;
  });
  assert_all_ok(outcomes);
  std::vector<double> scalars;
  for (const auto &call : fake->calls())
    if (call.name == "premul_create" && call.rank == 0) scalars.push_back(call.scalar);
  assert_int_equal(scalars.size(), 2);
  assert_true(scalars[0] == 0.5);   // f16, SUM: the factor itself
  assert_true(scalars[1] == 0.25);  // bf16, AVG: the factor over the group's size
  for (int rank = 0; rank < 2; ++rank) {
    assert_true(comm::f16_to_f32(results[static_cast<size_t>(2 * rank)]) == 4.0f);       // 2 + 2
    assert_true(comm::bf16_to_f32(results[static_cast<size_t>(2 * rank + 1)]) == 2.0f);  // (2 + 2) / 2
  }
}

// The node's place decides the default device (node-local rank, not global rank, modulo the count),
// and a node with more ranks than devices is refused at once, naming both counts.
void node_place_chooses_and_bounds_the_device(void **) {
  auto fake = std::make_shared<FakeNccl>(2);
  auto outcomes = harness::run_ranks(fake, 4, 5000, [&](int rank, NcclBackend &backend) {
    if (rank == 3) {
      try {
        backend.set_node_place(0, 4);
        (xffl::fail)(XFFL_EINTERNAL, "4 ranks on a node of 2 devices accepted");
      } catch (const Error &error) {
        if (error.status() != XFFL_EUNSUPPORTED || !strstr(error.what(), "runs 4 ranks but CUDA sees 2 devices")) throw;
      }
      return;
    }
    backend.set_node_place(rank == 2 ? 1 : rank, 2);  // rank 2 is node-local rank 1 of its node
    const int expected = rank == 2 ? 1 : rank;
    if (backend.device() != expected) (xffl::fail)(XFFL_EINTERNAL, "rank ", rank, " on device ", backend.device());
  });
  assert_all_ok(outcomes);
}

// The strict fake (fake_nccl.h) as CUDA and NCCL behave, which facilities.nccl_fake_continue relies on:
// a copy enqueued behind a collective that waits for its peer waits too, and runs once the collective
// is done; a collective on host memory is refused and recorded as a misuse.
void strict_fake_keeps_stream_order_and_device_memory(void **) {
  FakeNccl fake(1);
  fake.set_strict(true);
  nccl::UniqueId id;
  assert_int_equal(fake.get_unique_id(&id), nccl::kNcclSuccess);
  nccl::Comm comms[2] = {nullptr, nullptr};
  for (int r = 0; r < 2; ++r) assert_int_equal(fake.comm_init_rank(&comms[r], 2, id, r), nccl::kNcclInProgress);
  nccl::Stream streams[2] = {nullptr, nullptr};
  void *device[2] = {nullptr, nullptr};
  for (int r = 0; r < 2; ++r) {
    assert_int_equal(fake.stream_create(&streams[r]), nccl::kCudaSuccess);
    assert_int_equal(fake.device_alloc(&device[r], 4 * sizeof(float)), nccl::kCudaSuccess);
  }
  const float values[4] = {1, 2, 3, 4};
  float got[4] = {0, 0, 0, 0};
  assert_int_equal(fake.copy_async(device[0], values, sizeof values, streams[0]), nccl::kCudaSuccess);
  // Rank 1 receives, then copies what it received to the host: both wait for rank 0's part.
  assert_int_equal(fake.broadcast(device[1], device[1], 4, nccl::kNcclFloat32, 0, comms[1], streams[1]),
                   nccl::kNcclSuccess);
  assert_int_equal(fake.copy_async(got, device[1], sizeof got, streams[1]), nccl::kCudaSuccess);
  assert_int_equal(fake.stream_query(streams[1]), nccl::kCudaErrorNotReady);
  assert_true(got[0] == 0.0f && got[3] == 0.0f);
  assert_int_equal(fake.broadcast(device[0], device[0], 4, nccl::kNcclFloat32, 0, comms[0], streams[0]),
                   nccl::kNcclSuccess);
  assert_int_equal(fake.stream_query(streams[1]), nccl::kCudaSuccess);
  assert_true(std::memcmp(got, values, sizeof got) == 0);
  assert_true(fake.misuses().empty());
  // Host memory handed to NCCL: refused, a misuse.
  assert_int_equal(fake.broadcast(got, got, 4, nccl::kNcclFloat32, 0, comms[1], streams[1]), nccl::kNcclInvalidArgument);
  assert_int_equal(static_cast<int>(fake.misuses().size()), 1);
  for (int r = 0; r < 2; ++r) assert_int_equal(fake.device_free(device[r]), nccl::kCudaSuccess);
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(device_is_node_local_rank_modulo_count),
      cmocka_unit_test(pool_holds_k_distinct_streams_on_the_chosen_device),
      cmocka_unit_test(null_stream_runs_on_the_instance_stream),
      cmocka_unit_test(device_cannot_change_once_communicators_exist),
      cmocka_unit_test(caller_keeps_its_current_device),
      cmocka_unit_test(half_precision_premulsum_scalars),
      cmocka_unit_test(node_place_chooses_and_bounds_the_device),
      cmocka_unit_test(strict_fake_keeps_stream_order_and_device_memory),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
