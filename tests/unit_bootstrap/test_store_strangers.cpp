// Strangers on the store's port (random bytes, an oversized frame, a connection that never says
// anything, a hello that never finishes) are dropped, while a real job on the same store proceeds.
#include <unistd.h>
#include <random>

#include "bootstrap/protocol.h"
#include "bootstrap/store.h"
#include "bootstrap/store_server.h"

// cmocka last: its fail() macro would clash with std::ios::fail and xffl::fail.
#include "bootstrap_test.h"

using namespace xffl;
using namespace xffl::bootstrap;
using bootstrap_test::closed_by_peer;
using bootstrap_test::connect_raw;
using bootstrap_test::contains;
using bootstrap_test::expect_ok;
using bootstrap_test::run_threads;
using bootstrap_test::send_raw;

namespace {

const Logger kQuiet(XFFL_LOG_ERROR, -1, [](const std::string &) {});

StoreConfig config(int rank, int world, int port) {
  StoreConfig c;
  c.master_addr = "127.0.0.1";
  c.master_port = port;
  c.rank = rank;
  c.world_size = world;
  c.timeout_ms = 10000;
  c.hello_timeout_ms = 300;  // strangers that say nothing are dropped after this
  c.logger = kQuiet;
  return c;
}

std::vector<uint8_t> oversized_header() {
  std::vector<uint8_t> frame = protocol::encode(protocol::Publish{"k", {}});
  frame.resize(wire::kHeaderSize);
  frame[8] = 0x40;  // announces a 1 GiB payload
  return frame;
}

void test_garbage_dropped_while_job_proceeds(void **) {
  const int world = 4;
  auto root = std::make_unique<Store>(config(0, world, 0));
  const int port = root->port();

  std::mt19937 random(12345);
  std::vector<uint8_t> noise(4096);
  for (uint8_t &byte : noise) byte = static_cast<uint8_t>(random());
  std::vector<uint8_t> half_hello = protocol::encode(protocol::Hello{static_cast<uint32_t>(world), 1, "xffl", {}});
  half_hello.resize(half_hello.size() / 2);

  int random_bytes = connect_raw(port);
  int oversized = connect_raw(port);
  int silent = connect_raw(port);
  int slow_loris = connect_raw(port);
  send_raw(random_bytes, noise);
  send_raw(oversized, oversized_header());
  send_raw(slow_loris, half_hello);

  // The real job runs among the strangers.
  std::vector<std::vector<uint8_t>> seen(world);
  auto outcomes = run_threads(world, [&](int rank) {
    std::unique_ptr<Store> own;
    Store *store = root.get();
    if (rank != 0) {
      own = std::make_unique<Store>(config(rank, world, port));
      store = own.get();
    }
    store->publish("r" + std::to_string(rank), {static_cast<uint8_t>(rank)});
    for (int peer = 0; peer < world; ++peer)
      seen[static_cast<size_t>(rank)].push_back(store->fetch("r" + std::to_string(peer), 10000).at(0));
    store->barrier("after-strangers");
  });
  for (int rank = 0; rank < world; ++rank) {
    expect_ok(outcomes[static_cast<size_t>(rank)]);
    assert_true(seen[static_cast<size_t>(rank)] == std::vector<uint8_t>({0, 1, 2, 3}));
  }

  // Every stranger is dropped, the quiet ones at their hello deadline.
  assert_true(closed_by_peer(random_bytes, 5000));
  assert_true(closed_by_peer(oversized, 5000));
  assert_true(closed_by_peer(silent, 5000));
  assert_true(closed_by_peer(slow_loris, 5000));
  for (int fd : {random_bytes, oversized, silent, slow_loris}) ::close(fd);

  std::string drops;
  for (const std::string &line : root->server()->drops()) drops += line + "\n";
  assert_true(contains(drops, "bad magic"));
  assert_true(contains(drops, "exceeds the limit"));
  assert_true(contains(drops, "no complete hello within 300 ms"));
}

void test_many_strangers_do_not_block_a_join(void **) {
  auto root = std::make_unique<Store>(config(0, 2, 0));
  std::vector<int> crowd;
  for (int i = 0; i < 40; ++i) crowd.push_back(connect_raw(root->port()));
  Store other(config(1, 2, root->port()));
  other.publish("through", {1});
  assert_true(root->fetch("through", 1000) == std::vector<uint8_t>({1}));
  for (int fd : crowd) {
    assert_true(closed_by_peer(fd, 5000));
    ::close(fd);
  }
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_garbage_dropped_while_job_proceeds),
      cmocka_unit_test(test_many_strangers_do_not_block_a_join),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
