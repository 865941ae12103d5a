// The rendezvous store end to end on 127.0.0.1, ranks as threads of this process: publish/fetch in
// worlds of 1, 2, 4 and 8, write-once, bounded waits with messages that name rank, key and address,
// barriers, the ranks that left (departed_ranks), and the store's host going away.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <memory>

#include "bootstrap/store.h"
#include "bootstrap/store_server.h"

// cmocka last: its fail() macro would clash with std::ios::fail and xffl::fail.
#include "bootstrap_test.h"

using namespace xffl;
using namespace xffl::bootstrap;
using bootstrap_test::contains;
using bootstrap_test::expect_failure;
using bootstrap_test::expect_ok;
using bootstrap_test::outcome_of;
using bootstrap_test::run_threads;

namespace {

const Logger kQuiet(XFFL_LOG_ERROR, -1, [](const std::string &) {});

StoreConfig config(int rank, int world, int port) {
  StoreConfig c;
  c.master_addr = "127.0.0.1";
  c.master_port = port;
  c.rank = rank;
  c.world_size = world;
  c.job_id = "unit";
  c.timeout_ms = 10000;
  c.logger = kQuiet;
  return c;
}

std::vector<uint8_t> value_of(int rank) {
  std::vector<uint8_t> value(static_cast<size_t>(16 + rank));
  for (size_t i = 0; i < value.size(); ++i) value[i] = static_cast<uint8_t>(rank * 31 + static_cast<int>(i));
  return value;
}

// Rank 0 first (it picks a free port), then ranks 1..W-1 on threads; every rank publishes its value,
// reads everyone's, and meets the others at a barrier.
void exchange_in_world(int world) {
  auto root = std::make_unique<Store>(config(0, world, 0));
  const int port = root->port();
  std::vector<std::vector<std::vector<uint8_t>>> seen(static_cast<size_t>(world));
  auto body = [&](int rank) {
    std::unique_ptr<Store> own;
    Store *store = root.get();
    if (rank != 0) {
      own = std::make_unique<Store>(config(rank, world, port));
      store = own.get();
    }
    store->publish("addr/" + std::to_string(rank), value_of(rank));
    for (int peer = 0; peer < world; ++peer)
      seen[static_cast<size_t>(rank)].push_back(store->fetch("addr/" + std::to_string(peer), 10000));
    store->barrier("exchanged");
    store->barrier("exchanged");  // a name can be used again: the second use is a new barrier
  };
  std::vector<bootstrap_test::Outcome> outcomes = run_threads(world, body);
  for (int rank = 0; rank < world; ++rank) {
    expect_ok(outcomes[static_cast<size_t>(rank)]);
    for (int peer = 0; peer < world; ++peer)
      assert_true(seen[static_cast<size_t>(rank)][static_cast<size_t>(peer)] == value_of(peer));
  }
}

void test_world_1(void **) { exchange_in_world(1); }
void test_world_2(void **) { exchange_in_world(2); }
void test_world_4(void **) { exchange_in_world(4); }
void test_world_8(void **) { exchange_in_world(8); }

void test_write_once(void **) {
  Store store(config(0, 1, 0));
  store.publish("nccl/id", {1, 2, 3});
  expect_ok(outcome_of([&] { store.publish("nccl/id", {1, 2, 3}); }));  // same bytes: harmless
  expect_failure(outcome_of([&] { store.publish("nccl/id", {1, 2, 4}); }), XFFL_EINVAL,
                 {"rank 0", "key 'nccl/id'", "already published by rank 0 with different bytes"});
  assert_true(store.fetch("nccl/id", 1000) == std::vector<uint8_t>({1, 2, 3}));
}

void test_bounds_of_keys_and_values(void **) {
  Store store(config(0, 1, 0));
  expect_failure(outcome_of([&] { store.publish(std::string(1025, 'k'), {}); }), XFFL_EINVAL,
                 {"key of 1025 bytes exceeds the limit of 1024"});
  expect_failure(outcome_of([&] { store.publish("big", std::vector<uint8_t>((1 << 20) + 1)); }), XFFL_EINVAL,
                 {"1048577 bytes, more than the limit of 1048576"});
  expect_failure(outcome_of([&] { store.publish("", {}); }), XFFL_EINVAL, {"empty key"});
  std::vector<uint8_t> largest((1 << 20), 0xab);
  store.publish(std::string(1024, 'k'), largest);
  assert_true(store.fetch(std::string(1024, 'k'), 1000) == largest);
}

void test_fetch_timeout_names_rank_key_and_address(void **) {
  Store root(config(0, 2, 0));
  Store other(config(1, 2, root.port()));
  bootstrap_test::Outcome outcome = outcome_of([&] { other.fetch("ucx/addr/7", 200); });
  const std::string expected = "rank 1: timed out after 200 ms waiting for key 'ucx/addr/7' from 127.0.0.1:" +
                               std::to_string(root.port());
  expect_failure(outcome, XFFL_ETIMEOUT, {expected});
  // The connection survives a timeout.
  root.publish("ucx/addr/7", {7});
  assert_true(other.fetch("ucx/addr/7", 1000) == std::vector<uint8_t>({7}));
}

void test_fetch_waits_for_a_late_publish(void **) {
  Store root(config(0, 2, 0));
  Store other(config(1, 2, root.port()));
  std::vector<uint8_t> got;
  std::atomic<bool> fetching{false};
  std::thread waiter([&] {
    fetching = true;
    got = other.fetch("late", 10000);
  });
  while (!fetching) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  root.publish("late", {4, 2});
  waiter.join();
  assert_true(got == std::vector<uint8_t>({4, 2}));
}

void test_barrier_names_missing_ranks(void **) {
  auto root = std::make_unique<Store>(config(0, 4, 0));
  const int port = root->port();
  Store rank1(config(1, 4, port));
  Store rank3(config(3, 4, port));  // connected, but never comes to the barrier; rank 2 never connects
  std::vector<bootstrap_test::Outcome> outcomes = run_threads(2, [&](int rank) {
    Store &store = rank == 0 ? *root : rank1;
    store.barrier("bring-up", 300);
  });
  for (int rank = 0; rank < 2; ++rank)
    expect_failure(outcomes[static_cast<size_t>(rank)], XFFL_ETIMEOUT,
                   {"rank " + std::to_string(rank) + ": timed out waiting at barrier 'bring-up'",
                    "127.0.0.1:" + std::to_string(port), "for ranks 2 and 3", "(2 of 4 arrived", "gave up after 300 ms"});
  // Arriving late at a barrier that failed fails at once, with the same account.
  expect_failure(outcome_of([&] { rank3.barrier("bring-up", 10000); }), XFFL_ETIMEOUT, {"rank 3", "for ranks 2 and 3"});
}

void test_barrier_fails_fast_when_a_rank_left(void **) {
  Store root(config(0, 3, 0));
  Store rank1(config(1, 3, root.port()));
  {
    Store rank2(config(2, 3, root.port()));
  }  // rank 2 joined and left
  std::vector<bootstrap_test::Outcome> outcomes = run_threads(2, [&](int rank) {
    (rank == 0 ? root : rank1).barrier("done", 10000);
  });
  for (const auto &outcome : outcomes) expect_failure(outcome, XFFL_EPEER, {"barrier 'done'", "rank 2 left the store"});
}

void test_departed_ranks_empty_while_all_connected(void **) {
  Store root(config(0, 3, 0));
  Store rank1(config(1, 3, root.port()));
  Store rank2(config(2, 3, root.port()));
  assert_true(root.departed_ranks(5000).empty());
  assert_true(rank2.departed_ranks(5000).empty());
}

void test_departed_ranks_lists_ranks_that_left(void **) {
  Store root(config(0, 4, 0));
  Store rank2(config(2, 4, root.port()));
  {
    Store rank1(config(1, 4, root.port()));
    Store rank3(config(3, 4, root.port()));
  }  // ranks 1 and 3 joined and left
  // The server learns of a closed connection in its own time: ask again (bounded) until it has.
  std::vector<int> departed;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (departed.size() < 2 && std::chrono::steady_clock::now() < give_up) {
    departed = rank2.departed_ranks(5000);
    if (departed.size() < 2) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  assert_true(departed == std::vector<int>({1, 3}));  // ascending
  assert_true(root.departed_ranks(5000) == std::vector<int>({1, 3}));
}

void test_departed_ranks_names_the_store_when_it_is_gone(void **) {
  StoreConfig root_config = config(0, 2, 0);
  root_config.close_linger_ms = 0;
  auto root = std::make_unique<Store>(root_config);
  const std::string address = "127.0.0.1:" + std::to_string(root->port());
  Store rank1(config(1, 2, root->port()));
  root.reset();  // rank 0's process ending: the server goes with it
  bootstrap_test::Outcome outcome = outcome_of([&] { rank1.departed_ranks(5000); });
  assert_true(outcome.status == XFFL_EPEER || outcome.status == XFFL_ENETWORK);
  assert_true(contains(outcome.message, "rank 1") && contains(outcome.message, address));
  assert_true(contains(outcome.message, "asking which ranks left the job"));
}

void test_store_host_dies(void **) {
  StoreConfig root_config = config(0, 3, 0);
  root_config.close_linger_ms = 0;
  auto root = std::make_unique<Store>(root_config);
  const std::string address = "127.0.0.1:" + std::to_string(root->port());
  Store rank1(config(1, 3, root->port()));
  Store rank2(config(2, 3, root->port()));
  std::atomic<bool> waiting{false};
  bootstrap_test::Outcome blocked;
  std::thread waiter([&] {
    waiting = true;
    blocked = outcome_of([&] { rank1.fetch("never/published", 10000); });
  });
  while (!waiting) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  root.reset();  // rank 0's process ending: the server goes with it
  waiter.join();
  // Not a timeout: the loss is seen as soon as the connection drops.
  assert_true(blocked.status == XFFL_EPEER || blocked.status == XFFL_ENETWORK);
  assert_true(contains(blocked.message, "rank 1") && contains(blocked.message, address));
  assert_true(contains(blocked.message, "waiting for key 'never/published'"));

  bootstrap_test::Outcome later = outcome_of([&] { rank2.publish("x", {1}); });
  assert_true(later.status == XFFL_EPEER || later.status == XFFL_ENETWORK);
  assert_true(contains(later.message, "rank 2") && contains(later.message, address));
}

// The store's host is stopped (SIGSTOP), not dead: its kernel still accepts connections, nothing
// answers. Joining, and a request after joining, end in XFFL_ETIMEOUT naming rank 0 as the host
// that did not answer, never XFFL_ENETWORK without a name.
pid_t stopped_store_host(int world, int *port) {
  int fds[2];
  assert_int_equal(pipe(fds), 0);
  const pid_t child = fork();
  assert_true(child >= 0);
  if (child == 0) {
    close(fds[0]);
    Store host(config(0, world, 0));
    const int bound = host.port();
    if (write(fds[1], &bound, sizeof bound) != static_cast<ssize_t>(sizeof bound)) _exit(3);
    kill(getpid(), SIGSTOP);
    _exit(0);
  }
  close(fds[1]);
  assert_int_equal(read(fds[0], port, sizeof *port), static_cast<ssize_t>(sizeof *port));
  close(fds[0]);
  int status = 0;
  assert_int_equal(waitpid(child, &status, WUNTRACED), child);
  assert_true(WIFSTOPPED(status));
  return child;
}

void end_stopped(pid_t child) {
  kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
}

void test_stopped_store_host_is_named_when_joining(void **) {
  int port = 0;
  const pid_t child = stopped_store_host(2, &port);
  StoreConfig c = config(1, 2, port);
  c.timeout_ms = 800;
  auto outcome = outcome_of([&] { Store joiner(c); });
  end_stopped(child);
  expect_failure(outcome, XFFL_ETIMEOUT, {"rank 1", "hosted by rank 0", "127.0.0.1:" + std::to_string(port)});
}

void test_connect_timeout_when_no_store(void **) {
  // Take a free port and release it, so nothing listens there.
  int port = 0;
  {
    Store probe(config(0, 1, 0));
    port = probe.port();
  }
  StoreConfig c = config(1, 2, port);
  c.timeout_ms = 300;
  expect_failure(outcome_of([&] { Store store(c); }), XFFL_ETIMEOUT,
                 {"rank 1: could not reach the store at 127.0.0.1:" + std::to_string(port) + " within 300 ms"});
}

void test_close_wakes_a_blocked_fetch_and_later_calls_fail(void **) {
  Store root(config(0, 2, 0));
  Store other(config(1, 2, root.port()));
  std::atomic<bool> waiting{false};
  bootstrap_test::Outcome blocked;
  std::thread waiter([&] {
    waiting = true;
    blocked = outcome_of([&] { other.fetch("never", 10000); });
  });
  while (!waiting) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  other.close();
  waiter.join();
  assert_int_equal(blocked.status, XFFL_EPEER);
  expect_failure(outcome_of([&] { other.publish("k", {1}); }), XFFL_ESTATE, {"rank 1", "closed"});
}

void test_bind_failure_is_clear(void **) {
  Store first(config(0, 1, 0));
  expect_failure(outcome_of([&] { Store second(config(0, 1, first.port())); }), XFFL_ENETWORK,
                 {"rank 0: cannot serve the store at 127.0.0.1:" + std::to_string(first.port()), "MASTER_PORT"});
  StoreConfig bad = config(1, 2, 1);
  bad.master_addr = "no-such-host.invalid";
  bad.timeout_ms = 2000;
  // An unknown name fails at once (XFFL_ENETWORK); a resolver that cannot answer at all is retried
  // until the timeout (XFFL_ETIMEOUT). Either way the message names the rank and the host.
  bootstrap_test::Outcome unresolved = outcome_of([&] { Store store(bad); });
  assert_true(unresolved.status == XFFL_ENETWORK || unresolved.status == XFFL_ETIMEOUT);
  assert_true(contains(unresolved.message, "rank 1") && contains(unresolved.message, "no-such-host.invalid"));
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_world_1),
      cmocka_unit_test(test_world_2),
      cmocka_unit_test(test_world_4),
      cmocka_unit_test(test_world_8),
      cmocka_unit_test(test_write_once),
      cmocka_unit_test(test_bounds_of_keys_and_values),
      cmocka_unit_test(test_fetch_timeout_names_rank_key_and_address),
      cmocka_unit_test(test_fetch_waits_for_a_late_publish),
      cmocka_unit_test(test_barrier_names_missing_ranks),
      cmocka_unit_test(test_barrier_fails_fast_when_a_rank_left),
      cmocka_unit_test(test_departed_ranks_empty_while_all_connected),
      cmocka_unit_test(test_departed_ranks_lists_ranks_that_left),
      cmocka_unit_test(test_departed_ranks_names_the_store_when_it_is_gone),
      cmocka_unit_test(test_store_host_dies),
      cmocka_unit_test(test_stopped_store_host_is_named_when_joining),
      cmocka_unit_test(test_connect_timeout_when_no_store),
      cmocka_unit_test(test_close_wakes_a_blocked_fetch_and_later_calls_fail),
      cmocka_unit_test(test_bind_failure_is_clear),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
