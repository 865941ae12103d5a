// A backend added with its folder and one line (register_backend below) runs the real path of a user:
// xffl_set_global by its kind, the node and the execution device, federated scaling with HSDP,
// collectives, process groups, options on the live backend and federated averaging, all through the
// public C API. The fake moves "device memory" and refuses NULL streams under a kind that is not
// NCCL's, so every check the state makes must come from its virtual methods; its journal shows which
// were called. Threads act as ranks; every wait is bounded.

#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "common/error.h"
#include "fake_backend.h"
#include "xffl.h"

// cmocka after the C++ headers: its fail() macro would clash with xffl::fail.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {  // cmocka has no extern "C" of its own
#include <cmocka.h>
}

namespace {

using xffl::comm::MemoryKind;

constexpr int kWorld = 6;  // federated groups of 2 and 4 ranks, HSDP 2 inside each
constexpr int kTimeoutMs = 20000;
constexpr int kLiveTimeoutMs = 15000;
constexpr xffl_backend_t kAbsentBackend = static_cast<xffl_backend_t>(44);

// What went wrong on one thread-rank (cmocka may only fail on the main thread).
struct Rank {
  int rank = 0;
  std::vector<std::string> failures;
  void expect(xffl_status_t got, xffl_status_t wanted, const char *what) {
    if (got != wanted)
      failures.push_back("rank " + std::to_string(rank) + ": " + what + " returned " + xffl_status_string(got) +
                         ", expected " + xffl_status_string(wanted) + " (" + xffl_last_error_message() + ")");
  }
  void expect_true(bool ok, const std::string &what) {
    if (!ok) failures.push_back("rank " + std::to_string(rank) + ": " + what);
  }
  void expect_message(const char *part) {
    const std::string message = xffl_last_error_message();
    expect_true(message.find(part) != std::string::npos, "message '" + message + "' lacks '" + part + "'");
  }
};

void check_ranks(const std::vector<Rank> &ranks) {
  std::string all;
  for (const Rank &rank : ranks)
    for (const std::string &failure : rank.failures) all += failure + "\n";
  if (!all.empty()) fail_msg("%s", all.c_str());
}

int get_int(Rank &me, xffl_state_t *st, xffl_attr_t attr) {
  int value = -1;
  me.expect(xffl_get_int(st, attr, &value), XFFL_OK, "xffl_get_int");
  return value;
}

void run_rank(Rank &me) {
  const int rank = me.rank;
  xffl_state_t *st = nullptr;
  me.expect(xffl_state_create(&st), XFFL_OK, "xffl_state_create");
  if (!st) return;
  me.expect(xffl_set_option(st, XFFL_OPT_TIMEOUT_MS, kTimeoutMs), XFFL_OK, "xffl_set_option before set_global");
  // The fake says it moves device memory: host execution is refused from its line, before any bring-up.
  me.expect(xffl_set_global(st, fake::kFakeBackend, XFFL_DEVICE_CPU, "127.0.0.1", 0, rank, kWorld), XFFL_EINVAL,
            "xffl_set_global(fake, cpu)");
  me.expect_message("backend fake needs device type cuda");
  me.expect(xffl_set_global(st, fake::kFakeBackend, XFFL_DEVICE_CUDA, "127.0.0.1", 0, rank, kWorld), XFFL_OK,
            "xffl_set_global(fake, cuda)");
  me.expect(xffl_set_node(st, rank % 2, 2, rank / 2, kWorld / 2), XFFL_OK, "xffl_set_node");
  me.expect(xffl_set_exec_device(st, -1, 2), XFFL_OK, "xffl_set_exec_device");
  me.expect_true(get_int(me, st, XFFL_ATTR_CURRENT_DEVICE) == rank % 2, "current device is not node rank % 2");
  me.expect_true(get_int(me, st, XFFL_ATTR_DEVICE_COUNT) == fake::kDevices, "device count is not the fake's");
  void *stream = nullptr;
  me.expect(xffl_get_stream(st, 1, &stream), XFFL_OK, "xffl_get_stream");
  const int sizes[] = {2, 4};
  me.expect(xffl_federated_scaling(st, sizes, 2, 2), XFFL_OK, "xffl_federated_scaling");
  me.expect(xffl_set_option(st, XFFL_OPT_TIMEOUT_MS, kLiveTimeoutMs), XFFL_OK, "xffl_set_option after set_global");

  // Collectives on the world: a stream is accepted (the fake accepts streams), NULL is the fake's to refuse.
  xffl_group_t *world = nullptr;
  me.expect(xffl_get_group(st, XFFL_GROUP_WORLD, 0, &world), XFFL_OK, "xffl_get_group(world)");
  int value = rank + 1, sum = 0;
  me.expect(xffl_allreduce(world, &value, &sum, 1, XFFL_I32, XFFL_SUM, stream), XFFL_OK, "xffl_allreduce");
  me.expect_true(sum == kWorld * (kWorld + 1) / 2, "allreduce sum " + std::to_string(sum));
  me.expect(xffl_allreduce(world, &value, &sum, 1, XFFL_I32, XFFL_SUM, nullptr), XFFL_EINVAL,
            "xffl_allreduce on NULL");
  me.expect_message("fake backend: rank");
  // Device memory is never copied through the host: overlap outside the in-place layout is refused.
  int gathered[kWorld] = {};
  me.expect(xffl_allgather(world, &gathered[rank == 0 ? 1 : 0], gathered, 1, XFFL_I32, stream), XFFL_EINVAL,
            "xffl_allgather overlapping");
  me.expect_message("overlap");
  me.expect(xffl_allgather(world, &value, gathered, 1, XFFL_I32, stream), XFFL_OK, "xffl_allgather");
  for (int i = 0; i < kWorld; ++i) me.expect_true(gathered[i] == i + 1, "allgather slot " + std::to_string(i));

  // A process group of the even ranks, made through the fake's group authority.
  if (rank % 2 == 0) {
    const int evens[] = {4, 0, 2};
    xffl_group_t *group = nullptr;
    me.expect(xffl_create_process_group(st, evens, 3, "even ranks", &group), XFFL_OK, "xffl_create_process_group");
    int got = rank;
    me.expect(xffl_broadcast(group, &got, 1, XFFL_I32, 4, stream), XFFL_OK, "xffl_broadcast");
    me.expect_true(got == 4, "broadcast from rank 4 gave " + std::to_string(got));
    me.expect(xffl_barrier(group), XFFL_OK, "xffl_barrier");
    xffl_group_destroy(group);
  }

  // Federated averaging, weighted 1:3: shard s of group g holds 10 g + s; the mean is 7.5 + s.
  const double weights[] = {1, 3};
  me.expect(xffl_set_federated_weights(st, weights, 2), XFFL_OK, "xffl_set_federated_weights");
  const int shard = get_int(me, st, XFFL_ATTR_REPLICA_LOCAL_RANK);
  const float mine = static_cast<float>(10 * get_int(me, st, XFFL_ATTR_FEDERATED_RANK) + shard);
  std::vector<float> model(1000, mine);
  me.expect(xffl_federated_average(st, model.data(), model.size(), XFFL_F32, stream), XFFL_OK,
            "xffl_federated_average");
  for (float x : model)
    if (x != 7.5f + static_cast<float>(shard)) {
      me.expect_true(false, "averaged " + std::to_string(x) + " for shard " + std::to_string(shard));
      break;
    }
  me.expect(xffl_federated_average(st, model.data(), model.size(), XFFL_F32, nullptr), XFFL_EINVAL,
            "xffl_federated_average on NULL");

  char text[4096];
  size_t len = 0;
  me.expect(xffl_state_describe(st, XFFL_FORMAT_JSON, text, sizeof text, &len), XFFL_OK, "xffl_state_describe");
  me.expect_true(std::string(text).find("\"fake\"") != std::string::npos, "describe does not name the fake");
  xffl_state_destroy(st);
}

size_t count_prefix(const std::vector<std::string> &journal, const std::string &prefix) {
  size_t n = 0;
  for (const std::string &line : journal) n += line.compare(0, prefix.size(), prefix) == 0;
  return n;
}

void the_state_asks_only_the_backends_virtuals(void **) {
  std::vector<Rank> ranks(kWorld);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < kWorld; ++rank) {
    ranks[static_cast<size_t>(rank)].rank = rank;
    threads.emplace_back([&ranks, rank] { run_rank(ranks[static_cast<size_t>(rank)]); });
  }
  for (std::thread &thread : threads) thread.join();
  check_ranks(ranks);

  for (int rank = 0; rank < kWorld; ++rank) {
    const std::vector<std::string> journal = fake::journal(rank);
    std::string all;
    for (const std::string &line : journal) all += line + "; ";
    const auto has = [&](const std::string &line) {
      if (count_prefix(journal, line) == 0)
        fail_msg("rank %d's journal lacks '%s': %s", rank, line.c_str(), all.c_str());
    };
    has("make " + std::to_string(kWorld));
    has("apply timeout " + std::to_string(kTimeoutMs));  // at bring-up
    has("register_world " + std::to_string(kWorld));
    has("set_node_place " + std::to_string(rank % 2) + " 2");
    has("select_device -1 " + std::to_string(rank % 2) + " 2");
    has("stream 1");
    has("apply timeout " + std::to_string(kLiveTimeoutMs));  // xffl_set_option on the live backend
    // Every group of the layout went through family preparation (HSDP replica and shard, federation,
    // federated and replica groups of 2 streams each), and was made at once as the fake asked.
    const size_t families = count_prefix(journal, "prepare_family ");
    assert_int_equal(families, 7);
    assert_true(count_prefix(journal, "create_communicator ") >= families);
    assert_int_equal(count_prefix(journal, "claim_group"), rank % 2 == 0 ? 1 : 0);
  }
}

// Misuse of the table of backends is refused with a message naming the values.
void the_table_refuses_a_second_line_or_a_late_one(void **) {
  // The table was read by the states above: any new line comes too late.
  xffl_state_t *st = nullptr;
  assert_int_equal(xffl_state_create(&st), XFFL_OK);
  assert_int_equal(xffl_set_global(st, XFFL_BACKEND_UCX, XFFL_DEVICE_CUDA, "127.0.0.1", 0, 0, 1), XFFL_EUNSUPPORTED);
  // The device-memory backends come from the table: NCCL's line and the fake's.
  assert_non_null(strstr(xffl_last_error_message(), "needs backend nccl or fake"));
  assert_int_equal(xffl_set_global(st, static_cast<xffl_backend_t>(7), XFFL_DEVICE_CPU, "127.0.0.1", 0, 0, 1),
                   XFFL_EINVAL);
  assert_non_null(strstr(xffl_last_error_message(),
                         "backend 7 is not a known backend: none (0), ucx (1), nccl (2), wan (3), fake (42), absent (44)"));
  xffl_state_destroy(st);
  try {
    xffl::comm::register_backend({static_cast<xffl_backend_t>(43), "late", MemoryKind::kHost, &fake::kFakeMaker,
                                  nullptr});
    fail_msg("a line registered after the table was read");
  } catch (const xffl::Error &error) {
    assert_int_equal(error.status(), XFFL_ESTATE);
  }
}

// A line without a maker (a backend this build lacks) is refused in the line's own words, before any
// rendezvous, as backend ucx is in a build without UCX.
void a_backend_not_built_in_is_unsupported(void **) {
  xffl_state_t *st = nullptr;
  assert_int_equal(xffl_state_create(&st), XFFL_OK);
  assert_int_equal(xffl_set_global(st, kAbsentBackend, XFFL_DEVICE_CPU, "127.0.0.1", 0, 0, 2), XFFL_EUNSUPPORTED);
  assert_string_equal(xffl_last_error_message(),
                      "xffl_set_global: backend absent: this build of xffl has no absent support");
  xffl_state_destroy(st);
}

}  // namespace

int main(void) {
  // The fake's one line in the table of backends.
  xffl::comm::register_backend({fake::kFakeBackend, "fake", MemoryKind::kDevice, &fake::kFakeMaker, nullptr});
  try {  // a second line of the same kind or name is refused
    xffl::comm::register_backend({fake::kFakeBackend, "FAKE", MemoryKind::kHost, &fake::kFakeMaker, nullptr});
    return 1;
  } catch (const xffl::Error &error) {
    if (error.status() != XFFL_EINVAL) return 1;
  }
  // A line of a backend this build would lack.
  xffl::comm::register_backend({kAbsentBackend, "absent", MemoryKind::kHost, nullptr,
                                "this build of xffl has no absent support"});
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(the_state_asks_only_the_backends_virtuals),
      cmocka_unit_test(a_backend_not_built_in_is_unsupported),
      cmocka_unit_test(the_table_refuses_a_second_line_or_a_late_one),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
