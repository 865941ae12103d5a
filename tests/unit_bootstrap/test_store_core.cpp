// The store server's state machine without sockets: joins, parked requests, deadlines, strangers.
// Time is passed in, so deadlines are tested exactly and without sleeping.
#include <algorithm>

#include "bootstrap/auth.h"
#include "bootstrap/store_core.h"

// cmocka last: its fail() macro would clash with std::ios::fail and xffl::fail.
#include "bootstrap_test.h"

using namespace xffl;
using namespace xffl::bootstrap;
using bootstrap_test::contains;
using Clock = StoreCore::Clock;
using std::chrono::milliseconds;

namespace {

const std::string kToken = "correct horse battery staple";

protocol::Nonce fixed_nonce(uint8_t fill) {
  protocol::Nonce nonce;
  nonce.fill(fill);
  return nonce;
}

ServerConfig config(int world, const std::string &token = "") {
  ServerConfig c;
  c.world_size = world;
  c.job_id = "job";
  c.auth_token = token;
  c.address = "127.0.0.1:29500";
  c.hello_timeout_ms = 1000;
  c.logger = Logger(XFFL_LOG_ERROR, 0, [](const std::string &) {});
  c.nonce_source = [] { return fixed_nonce(0x5a); };
  return c;
}

// Everything the core wants to send to a connection, as frames; records the raw bytes too.
std::vector<wire::Frame> drain(StoreCore &core, StoreCore::ConnectionId id, std::vector<uint8_t> *raw = nullptr) {
  wire::FrameReader reader;
  size_t size = 0;
  while (const uint8_t *data = core.pending_output(id, &size)) {
    if (raw) raw->insert(raw->end(), data, data + size);
    reader.feed(data, size);
    core.sent(id, size);
  }
  std::vector<wire::Frame> frames;
  while (auto frame = reader.next()) frames.push_back(*frame);
  return frames;
}

void feed(StoreCore &core, StoreCore::ConnectionId id, const std::vector<uint8_t> &bytes, Clock::time_point now) {
  core.receive(id, bytes.data(), bytes.size(), now);
}

protocol::Hello hello(uint32_t rank, uint32_t world = 2, const std::string &job = "job") {
  protocol::Hello h;
  h.world_size = world;
  h.rank = rank;
  h.job_id = job;
  h.client_nonce = fixed_nonce(static_cast<uint8_t>(rank + 1));
  return h;
}

void join(StoreCore &core, StoreCore::ConnectionId id, uint32_t rank, Clock::time_point now) {
  assert_true(core.accept(id, "127.0.0.1:" + std::to_string(40000 + id), now));
  feed(core, id, protocol::encode(hello(rank)), now);
  auto frames = drain(core, id);
  assert_int_equal(frames.size(), 1);
  assert_true(frames[0].type == wire::Type::Welcome);
}

void test_fetch_parks_until_publish(void **) {
  StoreCore core(config(2));
  Clock::time_point now = Clock::now();
  join(core, 1, 0, now);
  join(core, 2, 1, now);
  feed(core, 2, protocol::encode(protocol::Fetch{"ucx/addr/0", 5000}), now);
  assert_true(drain(core, 2).empty());
  assert_false(core.wants_read(2));  // one request at a time: nothing more is read while parked
  feed(core, 1, protocol::encode(protocol::Publish{"ucx/addr/0", {9, 8, 7}}), now);
  auto to_publisher = drain(core, 1);
  assert_true(to_publisher.size() == 1 && to_publisher[0].type == wire::Type::Ok);
  auto to_fetcher = drain(core, 2);
  assert_int_equal(to_fetcher.size(), 1);
  assert_true(protocol::decode_value(to_fetcher[0].payload).value == std::vector<uint8_t>({9, 8, 7}));
  assert_true(core.wants_read(2));
}

void test_parked_fetch_expires_exactly(void **) {
  StoreCore core(config(2));
  Clock::time_point now = Clock::now();
  join(core, 1, 0, now);
  feed(core, 1, protocol::encode(protocol::Fetch{"never", 300}), now);
  core.expire(now + milliseconds(299));
  assert_true(drain(core, 1).empty());
  core.expire(now + milliseconds(300));
  auto frames = drain(core, 1);
  assert_int_equal(frames.size(), 1);
  protocol::Failure failure = protocol::decode_failure(frames[0].payload);
  assert_int_equal(failure.status, XFFL_ETIMEOUT);
  assert_true(contains(failure.message, "'never'"));
}

void test_slow_loris_dropped_at_hello_deadline(void **) {
  StoreCore core(config(2));
  Clock::time_point now = Clock::now();
  assert_true(core.accept(7, "10.0.0.9:5555", now));
  std::vector<uint8_t> partial = protocol::encode(hello(1));
  partial.resize(5);  // starts a hello and never finishes it
  feed(core, 7, partial, now);
  assert_true(core.next_deadline().has_value());
  core.expire(now + milliseconds(999));
  assert_true(core.disposition(7) == StoreCore::Disposition::Keep);
  core.expire(now + milliseconds(1000));
  assert_true(core.disposition(7) == StoreCore::Disposition::CloseNow);
  assert_true(contains(core.drops().back(), "10.0.0.9:5555"));
  assert_true(contains(core.drops().back(), "no complete hello within 1000 ms"));
}

void test_request_before_hello_dropped(void **) {
  StoreCore core(config(2));
  Clock::time_point now = Clock::now();
  assert_true(core.accept(3, "stranger", now));
  feed(core, 3, protocol::encode(protocol::Publish{"k", {1}}), now);
  assert_true(core.disposition(3) == StoreCore::Disposition::CloseNow);
  assert_true(contains(core.drops().back(), "expected a hello, got a publish"));
}

void test_token_checked_and_never_sent(void **) {
  StoreCore core(config(2, kToken));
  Clock::time_point now = Clock::now();
  std::vector<uint8_t> server_bytes;

  // Right token: challenge, proof, welcome with the server's proof.
  assert_true(core.accept(1, "good", now));
  protocol::Hello good = hello(1);
  feed(core, 1, protocol::encode(good), now);
  auto frames = drain(core, 1, &server_bytes);
  assert_true(frames.size() == 1 && frames[0].type == wire::Type::Challenge);
  protocol::Nonce server_nonce = protocol::decode_challenge(frames[0].payload).server_nonce;
  protocol::Auth proof{auth::proof(auth::Side::Client, kToken, 2, 1, "job", good.client_nonce, server_nonce)};
  feed(core, 1, protocol::encode(proof), now);
  frames = drain(core, 1, &server_bytes);
  assert_true(frames.size() == 1 && frames[0].type == wire::Type::Welcome);
  protocol::Welcome welcome = protocol::decode_welcome(frames[0].payload);
  assert_true(welcome.authenticated);
  assert_true(auth::proofs_equal(
      welcome.server_proof, auth::proof(auth::Side::Server, kToken, 2, 1, "job", good.client_nonce, server_nonce)));

  // Wrong token: refused with XFFL_EAUTH, and the refusal is recorded on the server side.
  assert_true(core.accept(2, "bad", now));
  protocol::Hello bad = hello(0);
  feed(core, 2, protocol::encode(bad), now);
  frames = drain(core, 2, &server_bytes);
  server_nonce = protocol::decode_challenge(frames[0].payload).server_nonce;
  feed(core, 2, protocol::encode(protocol::Auth{auth::proof(auth::Side::Client, "guess", 2, 0, "job", bad.client_nonce,
                                                            server_nonce)}),
       now);
  frames = drain(core, 2, &server_bytes);
  assert_true(frames.size() == 1 && frames[0].type == wire::Type::Reject);
  assert_int_equal(protocol::decode_reject(frames[0].payload).status, XFFL_EAUTH);
  assert_true(core.disposition(2) == StoreCore::Disposition::CloseAfterFlush);
  assert_true(contains(core.rejections().back(), "authentication failed for rank 0"));

  // A proof replayed from another conversation (other nonces) fails too.
  assert_true(core.accept(3, "replay", now));
  feed(core, 3, protocol::encode(hello(0)), now);
  drain(core, 3, &server_bytes);
  feed(core, 3, protocol::encode(proof), now);
  frames = drain(core, 3, &server_bytes);
  assert_true(frames.size() == 1 && frames[0].type == wire::Type::Reject);

  std::string all(server_bytes.begin(), server_bytes.end());
  assert_false(contains(all, kToken));
  assert_true(server_bytes.size() > 3 * wire::kHeaderSize);
}

void test_job_mismatch_and_duplicate_rank_refused(void **) {
  StoreCore core(config(8));
  Clock::time_point now = Clock::now();
  assert_true(core.accept(1, "a", now));
  feed(core, 1, protocol::encode(hello(1, 4)), now);
  auto frames = drain(core, 1);
  protocol::Reject reject = protocol::decode_reject(frames.at(0).payload);
  assert_int_equal(reject.status, XFFL_EINVAL);
  assert_string_equal(reject.message.c_str(), "world size 4 differs from the store's 8");

  assert_true(core.accept(2, "b", now));
  feed(core, 2, protocol::encode(hello(1, 8, "other")), now);
  reject = protocol::decode_reject(drain(core, 2).at(0).payload);
  assert_string_equal(reject.message.c_str(), "job id 'other' differs from the store's 'job'");

  assert_true(core.accept(3, "c", now));
  feed(core, 3, protocol::encode(hello(1, 8)), now);
  assert_true(drain(core, 3).at(0).type == wire::Type::Welcome);
  assert_true(core.accept(4, "d", now));
  feed(core, 4, protocol::encode(hello(1, 8)), now);
  reject = protocol::decode_reject(drain(core, 4).at(0).payload);
  assert_true(contains(reject.message, "rank 1 has already joined"));
  assert_int_equal(core.rejections().size(), 3);
}

void test_barrier_fails_when_a_rank_leaves(void **) {
  ServerConfig c = config(3);
  Clock::time_point now = Clock::now();
  StoreCore three(c);
  for (uint32_t rank = 0; rank < 3; ++rank) {
    assert_true(three.accept(rank + 1, "peer", now));
    feed(three, rank + 1, protocol::encode(hello(rank, 3)), now);
    drain(three, rank + 1);
  }
  feed(three, 1, protocol::encode(protocol::Barrier{"sync#0", 10000}), now);
  assert_true(drain(three, 1).empty());
  three.disconnected(3, now);  // rank 2 leaves before arriving
  auto frames = drain(three, 1);
  assert_int_equal(frames.size(), 1);
  protocol::Failure failure = protocol::decode_failure(frames[0].payload);
  assert_int_equal(failure.status, XFFL_EPEER);
  assert_true(failure.ranks == std::vector<uint32_t>({2}));
  // A later barrier fails at once for the same reason.
  feed(three, 2, protocol::encode(protocol::Barrier{"later#0", 10000}), now);
  failure = protocol::decode_failure(drain(three, 2).at(0).payload);
  assert_int_equal(failure.status, XFFL_EPEER);
  assert_true(contains(failure.message, "rank 2 left the store"));
}

// Departed: answered at once with the joined ranks whose connection closed, ascending; a rank that
// never joined (a stranger hanging up) is not one of them.
void test_departed_lists_closed_ranks_only(void **) {
  StoreCore core(config(4));
  Clock::time_point now = Clock::now();
  for (uint32_t rank = 0; rank < 4; ++rank) {
    assert_true(core.accept(rank + 1, "peer", now));
    feed(core, rank + 1, protocol::encode(hello(rank, 4)), now);
    drain(core, rank + 1);
  }
  assert_true(core.accept(9, "stranger", now));
  auto ask = [&](StoreCore::ConnectionId id) {
    feed(core, id, protocol::encode_departed(), now);
    auto frames = drain(core, id);
    assert_int_equal(frames.size(), 1);
    assert_true(frames[0].type == wire::Type::Ranks);
    return protocol::decode_ranks(frames[0].payload, 4).ranks;
  };
  assert_true(ask(1).empty());
  core.disconnected(9, now);
  core.disconnected(4, now);  // rank 3
  core.disconnected(2, now);  // rank 1
  assert_true(ask(1) == std::vector<uint32_t>({1, 3}));
  assert_true(ask(3) == std::vector<uint32_t>({1, 3}));
}

// Claims through the protocol: members get one identity, a Release is never answered and frees the slot
// only when every member released it or left; a rank cannot release another rank's slot.
void test_group_claims_and_releases(void **) {
  ServerConfig c = config(3);
  c.group_slots = 2;
  StoreCore core(c);
  Clock::time_point now = Clock::now();
  for (uint32_t rank = 0; rank < 3; ++rank) {
    assert_true(core.accept(rank + 1, "peer", now));
    feed(core, rank + 1, protocol::encode(hello(rank, 3)), now);
    drain(core, rank + 1);
  }
  auto claim = [&](StoreCore::ConnectionId id, const std::vector<int> &members, uint32_t creation) {
    const std::string key = GroupRegistry::key(members, creation);
    feed(core, id, protocol::encode(protocol::Claim{std::vector<uint8_t>(key.begin(), key.end()),
                                                    static_cast<uint32_t>(members.size())}),
         now);
    auto frames = drain(core, id);
    assert_int_equal(frames.size(), 1);
    return frames[0];
  };
  auto identity = [&](const wire::Frame &frame) {
    assert_true(frame.type == wire::Type::Identity);
    return protocol::decode_identity(frame.payload);
  };
  const protocol::Identity a = identity(claim(1, {0, 1}, 0));
  assert_int_equal(identity(claim(2, {0, 1}, 0)).slot, a.slot);
  const protocol::Identity b = identity(claim(1, {0, 2}, 0));
  assert_int_not_equal(a.slot, b.slot);
  // Both slots live: a third group is refused with ENOMEM, not given a shared slot.
  wire::Frame refused = claim(2, {1, 2}, 0);
  assert_true(refused.type == wire::Type::Failure);
  assert_int_equal(protocol::decode_failure(refused.payload).status, XFFL_ENOMEM);
  // Rank 2 never claimed slot a: its release changes nothing. Rank 0's does, and is not answered.
  feed(core, 3, protocol::encode(protocol::Release{a.slot}), now);
  feed(core, 1, protocol::encode(protocol::Release{a.slot}), now);
  assert_true(drain(core, 1).empty());
  assert_true(drain(core, 3).empty());
  assert_int_equal(claim(2, {1, 2}, 0).type == wire::Type::Failure, 1);  // rank 1 still holds a
  core.disconnected(2, now);  // rank 1 leaves: its slots are released
  const protocol::Identity c3 = identity(claim(3, {1, 2}, 1));
  assert_int_equal(c3.slot, a.slot);
  assert_true(c3.serial != a.serial);
  // A group larger than the job is refused.
  wire::Frame too_big = claim(1, {0, 1, 2, 3}, 0);
  assert_true(too_big.type == wire::Type::Failure);
  assert_int_equal(protocol::decode_failure(too_big.payload).status, XFFL_EINVAL);
}

void test_connection_limit(void **) {
  ServerConfig c = config(1);
  c.max_connections = 2;
  StoreCore core(c);
  Clock::time_point now = Clock::now();
  assert_true(core.accept(1, "a", now));
  assert_true(core.accept(2, "b", now));
  assert_false(core.accept(3, "c", now));
  core.disconnected(1, now);
  assert_true(core.accept(4, "d", now));
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fetch_parks_until_publish),
      cmocka_unit_test(test_parked_fetch_expires_exactly),
      cmocka_unit_test(test_slow_loris_dropped_at_hello_deadline),
      cmocka_unit_test(test_request_before_hello_dropped),
      cmocka_unit_test(test_token_checked_and_never_sent),
      cmocka_unit_test(test_job_mismatch_and_duplicate_rank_refused),
      cmocka_unit_test(test_barrier_fails_when_a_rank_leaves),
      cmocka_unit_test(test_departed_lists_closed_ranks_only),
      cmocka_unit_test(test_group_claims_and_releases),
      cmocka_unit_test(test_connection_limit),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
