// The store's job check and shared-secret authentication, end to end: mismatches are refused with a
// clear message on both sides, a wrong token gives XFFL_EAUTH, the right one works, and the token
// never travels on the wire.
#include <mutex>

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

namespace {

const Logger kQuiet(XFFL_LOG_ERROR, -1, [](const std::string &) {});

StoreConfig config(int rank, int world, int port, const std::string &token = "") {
  StoreConfig c;
  c.master_addr = "127.0.0.1";
  c.master_port = port;
  c.rank = rank;
  c.world_size = world;
  c.job_id = "b";
  c.auth_token = token;
  c.timeout_ms = 5000;
  c.logger = kQuiet;
  return c;
}

std::string joined(const std::vector<std::string> &lines) {
  std::string all;
  for (const std::string &line : lines) all += line + "\n";
  return all;
}

void test_job_id_mismatch_both_sides(void **) {
  Store root(config(0, 2, 0));
  StoreConfig other = config(1, 2, root.port());
  other.job_id = "a";
  expect_failure(outcome_of([&] { Store store(other); }), XFFL_EINVAL,
                 {"rank 1", "127.0.0.1:" + std::to_string(root.port()), "job id 'a' differs from the store's 'b'"});
  std::string server_side = joined(root.server()->rejections());
  assert_true(contains(server_side, "refused rank 1"));
  assert_true(contains(server_side, "job id 'a' differs from the store's 'b'"));
}

void test_world_size_mismatch_both_sides(void **) {
  Store root(config(0, 8, 0));
  expect_failure(outcome_of([&] { Store store(config(3, 4, root.port())); }), XFFL_EINVAL,
                 {"rank 3", "127.0.0.1:" + std::to_string(root.port()), "world size 4 differs from the store's 8"});
  assert_true(contains(joined(root.server()->rejections()), "world size 4 differs from the store's 8"));
}

void test_duplicate_rank_refused(void **) {
  Store root(config(0, 3, 0));
  Store first(config(2, 3, root.port()));
  expect_failure(outcome_of([&] { Store twin(config(2, 3, root.port())); }), XFFL_EINVAL,
                 {"rank 2", "has already joined the store"});
  // The job is unharmed: the first rank 2 still works.
  first.publish("still", {1});
  assert_true(root.fetch("still", 1000) == std::vector<uint8_t>({1}));
}

void test_wrong_token_is_eauth(void **) {
  Store root(config(0, 2, 0, "the right token"));
  const std::string address = "127.0.0.1:" + std::to_string(root.port());
  expect_failure(outcome_of([&] { Store store(config(1, 2, root.port(), "a wrong token")); }), XFFL_EAUTH,
                 {"rank 1", address, "XFFL_AUTH_TOKEN"});
  expect_failure(outcome_of([&] { Store store(config(1, 2, root.port())); }), XFFL_EAUTH,
                 {"rank 1", address, "requires a shared secret"});
  assert_true(contains(joined(root.server()->rejections()), "authentication failed for rank 1"));
}

void test_client_refuses_a_store_without_auth(void **) {
  Store root(config(0, 2, 0));
  expect_failure(outcome_of([&] { Store store(config(1, 2, root.port(), "secret")); }), XFFL_EAUTH,
                 {"rank 1", "does not authenticate"});
}

void test_right_token_works_and_never_travels(void **) {
  const std::string token = "0123456789-very-secret-token";
  std::mutex lock;
  std::vector<uint8_t> wire_bytes;
  auto record = [&](bool, const uint8_t *data, size_t size) {
    std::lock_guard<std::mutex> hold(lock);
    wire_bytes.insert(wire_bytes.end(), data, data + size);
  };
  StoreConfig root_config = config(0, 2, 0, token);
  root_config.server_tap = record;
  root_config.client_tap = record;
  Store root(root_config);
  StoreConfig other_config = config(1, 2, root.port(), token);
  other_config.client_tap = record;
  Store other(other_config);
  other.publish("ucx/addr/1", {1, 2, 3});
  assert_true(root.fetch("ucx/addr/1", 1000) == std::vector<uint8_t>({1, 2, 3}));

  std::lock_guard<std::mutex> hold(lock);
  std::string seen(wire_bytes.begin(), wire_bytes.end());
  assert_true(contains(seen, "ucx/addr/1"));  // the capture works: it holds the conversation
  assert_true(contains(seen, "XFST"));
  assert_false(contains(seen, token));
  assert_false(contains(seen, token.substr(0, 8)));
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_job_id_mismatch_both_sides),
      cmocka_unit_test(test_world_size_mismatch_both_sides),
      cmocka_unit_test(test_duplicate_rank_refused),
      cmocka_unit_test(test_wrong_token_is_eauth),
      cmocka_unit_test(test_client_refuses_a_store_without_auth),
      cmocka_unit_test(test_right_token_works_and_never_travels),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
