// The seam of federated::Strategy, proven from outside the library: a strategy that lives in this file
// alone ("sum, then broadcast": senders SUM over their FEDERATED group, then each sender broadcasts
// through its REPLICA group; it takes no weights) is added to the state's table, picked with
// xffl_set_option(XFFL_OPT_FEDERATED_STRATEGY) and run through xffl_federated_average and _many on
// the UCX backend under xffl-run. Its result (a sum, where the built-ins give a mean) and its call
// count show that it ran; its refusals come back as statuses with its message on every rank.
// Run with HSDP (e.g. -n 8 --federated 2,6 --hsdp 2). Prints "rank R: N checks passed".
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/error.h"
#include "federated/strategy.h"
#include "state/distributed_state.h"
#include "xffl.h"

namespace {

int rank = -1;
long checks = 0;

[[noreturn]] void die(const std::string &what) {
  std::fprintf(stderr, "rank %d: %s\n", rank, what.c_str());
  std::exit(1);
}

void check_ok(xffl_status_t status, const char *call) {
  if (status != XFFL_OK)
    die(std::string(call) + " failed: " + xffl_status_string(status) + ": " + xffl_last_error_message());
}
#define CHECK(call) check_ok((call), #call)

void expect_error(xffl_status_t status, xffl_status_t expected, const std::string &message, const char *call) {
  if (status != expected) die(std::string(call) + " returned " + xffl_status_string(status) + ", expected " +
                              xffl_status_string(expected));
  if (message != xffl_last_error_message())
    die(std::string(call) + ": message '" + xffl_last_error_message() + "', expected '" + message + "'");
  ++checks;
}

// The test strategy. Its schedule calls are counted to show that _many goes through schedule().
std::atomic<int> schedules{0};

class SumThenBroadcast final : public xffl::federated::Strategy {
 public:
  xffl::federated::Roles roles(const xffl::federated::Placement &placement,
                               xffl::federated::Groups &groups) const override {
    if (!placement.hsdp) xffl::fail(XFFL_EINVAL, "test strategy SUM_THEN_BROADCAST needs HSDP");
    xffl::federated::Roles roles;
    roles.federated = &groups.federated();
    roles.replica = &groups.replica();
    roles.is_sender = placement.is_sender;
    roles.sender_index = placement.sender_index;
    roles.federated_groups = placement.federated_groups;
    roles.federated_rank = placement.federated_rank;
    roles.weighted = !placement.weights.empty();
    return roles;
  }

 protected:
  void check(const xffl::federated::Roles &roles, xffl_dtype_t) const override {
    if (roles.weighted) xffl::fail(XFFL_EINVAL, "test strategy SUM_THEN_BROADCAST takes no weights");
  }
  void schedule(const xffl::federated::Roles &roles, void *buf, size_t count, xffl_dtype_t dtype,
                void *stream) const override {
    ++schedules;
    if (roles.is_sender) roles.federated->allreduce(buf, buf, count, dtype, XFFL_SUM, stream);
    roles.replica->broadcast(buf, count, dtype, roles.sender_index, stream);
  }
};

constexpr int kSumThenBroadcast = 100;

int get(const xffl_state_t *st, xffl_attr_t attr) {
  int value = 0;
  CHECK(xffl_get_int(st, attr, &value));
  return value;
}

// Facility f's value at index i (small integers: sums and means are exact in f32).
float facility_value(int facility, size_t i) { return static_cast<float>((facility + 1) * static_cast<int>(i % 13)); }

// Senders start from their facility's values, the others from garbage that the broadcast overwrites.
std::vector<float> start(xffl_state_t *st, size_t count, size_t offset) {
  int is_sender = 1;
  (void)xffl_get_int(st, XFFL_ATTR_IS_SENDER, &is_sender);
  const int facility = get(st, XFFL_ATTR_FEDERATED_RANK);
  std::vector<float> x(count);
  for (size_t i = 0; i < count; ++i) x[i] = is_sender ? facility_value(facility, i + offset) : -777.0f;
  return x;
}

// sum: every facility's value added up; else their mean.
void expect_values(xffl_state_t *st, const std::vector<float> &x, size_t offset, bool sum, const char *what) {
  const int facilities = get(st, XFFL_ATTR_FEDERATED_WORLD_SIZE);
  for (size_t i = 0; i < x.size(); ++i) {
    float total = 0;
    for (int f = 0; f < facilities; ++f) total += facility_value(f, i + offset);
    const float want = sum ? total : total / static_cast<float>(facilities);
    if (x[i] != want)
      die(std::string(what) + ": index " + std::to_string(i) + " is " + std::to_string(x[i]) + ", expected " +
          std::to_string(want));
  }
  ++checks;
}

}  // namespace

int main() {
  const char *rank_env = std::getenv("RANK");
  rank = rank_env ? std::atoi(rank_env) : -1;
  xffl_state_t *st = nullptr;
  CHECK(xffl_state_from_env(&st));
  if (!xffl_is_hsdp_setup(st)) die("run this check with --hsdp");

  // Unknown until added: the message names the built-in strategies, as it always did.
  expect_error(xffl_set_option(st, XFFL_OPT_FEDERATED_STRATEGY, kSumThenBroadcast), XFFL_EINVAL,
               "xffl_set_option: federated strategy 100 is not XFFL_FEDAVG_HIERARCHICAL (0) or XFFL_FEDAVG_FLAT (1)",
               "set_option(100) before adding it");

  static const SumThenBroadcast strategy;
  st->federated_strategies().add(kSumThenBroadcast, "SUM_THEN_BROADCAST", strategy);
  try {
    st->federated_strategies().add(XFFL_FEDAVG_FLAT, "ANOTHER", strategy);
    die("adding a strategy under FLAT's value was accepted");
  } catch (const xffl::Error &error) {
    if (error.status() != XFFL_EINVAL ||
        std::string(error.what()) != "federated strategy 1 is taken by XFFL_FEDAVG_FLAT; ANOTHER needs another value")
      die(std::string("adding under a taken value: ") + error.what());
    ++checks;
  }
  expect_error(xffl_set_option(st, XFFL_OPT_FEDERATED_STRATEGY, 101), XFFL_EINVAL,
               "xffl_set_option: federated strategy 101 is not XFFL_FEDAVG_HIERARCHICAL (0), XFFL_FEDAVG_FLAT (1) or "
               "SUM_THEN_BROADCAST (100)",
               "set_option(101)");
  CHECK(xffl_set_option(st, XFFL_OPT_FEDERATED_STRATEGY, kSumThenBroadcast));
  int picked = -1;
  CHECK(xffl_get_option(st, XFFL_OPT_FEDERATED_STRATEGY, &picked));
  if (picked != kSumThenBroadcast) die("xffl_get_option gives strategy " + std::to_string(picked));

  // One buffer, small (recursive doubling, tree) and large (ring, chain): the sum, on every copy.
  for (size_t count : {size_t{1001}, size_t{3} << 20}) {
    std::vector<float> x = start(st, count, 0);
    const int before = schedules;
    CHECK(xffl_federated_average(st, x.data(), x.size(), XFFL_F32, nullptr));
    if (schedules != before + 1) die("xffl_federated_average did not run the test strategy once");
    expect_values(st, x, 0, true, "average through the test strategy");
  }

  // Several buffers: the default schedule_many puts the small ones in one bucket (one schedule call)
  // and runs the large one alone.
  const std::vector<size_t> counts = {3, 0, 1000, 77, size_t{5} << 20, 12};
  std::vector<std::vector<float>> buffers;
  std::vector<void *> bufs;
  for (size_t b = 0; b < counts.size(); ++b) buffers.push_back(start(st, counts[b], b));
  for (auto &buffer : buffers) bufs.push_back(buffer.data());
  const int before = schedules;
  CHECK(xffl_federated_average_many(st, bufs.data(), counts.data(), counts.size(), XFFL_F32, nullptr));
  if (schedules != before + 2) die("_many ran the test strategy " + std::to_string(schedules - before) + " times, not 2");
  for (size_t b = 0; b < counts.size(); ++b) expect_values(st, buffers[b], b, true, "_many through the test strategy");

  // Its own check, before any message, on every rank alike: no rank waits for the others.
  const std::vector<double> weights(static_cast<size_t>(get(st, XFFL_ATTR_FEDERATED_WORLD_SIZE)), 1.0);
  CHECK(xffl_set_federated_weights(st, weights.data(), weights.size()));
  std::vector<float> x = start(st, 100, 0);
  expect_error(xffl_federated_average(st, x.data(), x.size(), XFFL_F32, nullptr), XFFL_EINVAL,
               "xffl_federated_average: test strategy SUM_THEN_BROADCAST takes no weights", "weighted average through the test strategy");
  CHECK(xffl_set_federated_weights(st, nullptr, 0));

  // Back to the built-in HIERARCHICAL: the mean again.
  CHECK(xffl_set_option(st, XFFL_OPT_FEDERATED_STRATEGY, XFFL_FEDAVG_HIERARCHICAL));
  x = start(st, 1001, 0);
  CHECK(xffl_federated_average(st, x.data(), x.size(), XFFL_F32, nullptr));
  expect_values(st, x, 0, false, "HIERARCHICAL after the test strategy");

  std::printf("rank %d: %ld checks passed\n", rank, checks);
  xffl_state_destroy(st);
  return 0;
}
