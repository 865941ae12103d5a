// The UCX backend's peer failure detector (comm/ucx/peer_failure_detector.h) on its own, with an
// in-memory exchange and no UCX worker: the first reason a peer failed stays, and a peer a wait timed
// out on is not failed; a peer on this host whose published process has exited is failed, a running
// one or one on another host is not judged; the liveness check looks an address up once and ignores
// malformed ones; known_failures names departed and exited members (not this rank, not the excluded
// one), marks departed non-members too, and reports a store that cannot be asked or a lookup that
// failed, after which it asks no more; UCX's error handler marks its peer failed in UCX's words.
// Revocation (issue 12): only real evidence confirms a failure (a peer given up on is unusable but
// not confirmed, so never announced to the job); the address table loaded at set_global lets the
// liveness check judge every peer with the store gone; the revoke notice's tag is one no message of
// a group can carry and no data receive or mismatch probe can match.
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "comm/ucx/peer_addresses.h"
#include "comm/ucx/peer_failure_detector.h"
#include "comm/ucx/revocation.h"
#include "comm/ucx/tag.h"
#include "memory_exchange.h"

// cmocka last: its fail() macro would rewrite xffl::fail in the headers above.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

namespace {

using xffl::comm::ucx::Clock;
using xffl::comm::ucx::PeerAddresses;
using xffl::comm::ucx::PeerFailureDetector;
using xffl::comm::ucx::ProcessIdentity;

constexpr int kWorld = 5;
constexpr int kMe = 0;

// The test exchange, counting fetches, plus what a store would answer about departed ranks: a fixed
// list, or the error of a store that is gone.
class CountingExchange final : public xffl::comm::Exchange {
 public:
  void publish(const std::string &key, const std::vector<uint8_t> &value) override { inner_.publish(key, value); }
  std::vector<uint8_t> fetch(const std::string &key, int timeout_ms) override {
    ++fetches;
    return inner_.fetch(key, timeout_ms);
  }
  std::vector<int> departed_ranks(int) override {
    if (store_gone) (xffl::fail)(XFFL_EPEER, "rank 0: lost the store at 127.0.0.1:1 while asking which ranks left the job");
    return departed;
  }
  xffl::comm::GroupIdentity claim_group(const std::vector<int> &members, uint32_t creation, int timeout_ms) override {
    return inner_.claim_group(members, creation, timeout_ms);
  }
  void release_group(uint32_t slot) noexcept override { inner_.release_group(slot); }

  int fetches = 0;
  std::vector<int> departed;
  bool store_gone = false;

 private:
  xffl_test::MemoryExchange inner_;
};

// The detector of rank kMe, with what it needs.
struct Detector {
  CountingExchange exchange;
  xffl::comm::ucx::UcxSettings settings;
  PeerAddresses addresses{kMe, kWorld, exchange};
  PeerFailureDetector failures{kMe, kWorld, exchange, addresses, settings};

  Detector() { settings.log_level = XFFL_LOG_ERROR; }
  // What `rank` would publish from `host` as `process` (any worker address will do).
  void publish(int rank, const std::string &host, const ProcessIdentity &process) {
    const uint8_t worker_address[] = {7};
    exchange.publish(xffl::comm::ucx::address_key(rank),
                     xffl::comm::ucx::encode_address(host, process, worker_address, sizeof worker_address));
  }
};

Clock::time_point in_ms(int ms) { return Clock::now() + std::chrono::milliseconds(ms); }

// A child that has exited and was reaped.
ProcessIdentity exited_child() {
  const pid_t pid = fork();
  if (pid == 0) _exit(0);
  assert_true(pid > 0);
  assert_int_equal(waitpid(pid, nullptr, 0), pid);
  ProcessIdentity identity = xffl::comm::ucx::this_process();
  identity.pid = pid;
  return identity;
}

std::string exited_reason(const ProcessIdentity &process) {
  return "its process (pid " + std::to_string(process.pid) + " on this host) has exited";
}

void expect_failure(const PeerFailureDetector &failures, int rank, const std::string &why) {
  const std::string *seen = failures.failure(rank);
  if (!seen) fail_msg("rank %d is not marked failed; expected \"%s\"", rank, why.c_str());
  assert_string_equal(seen->c_str(), why.c_str());
}

void expect_phrases(const std::vector<std::string> &seen, const std::vector<std::string> &expected) {
  std::string all;
  for (const std::string &phrase : seen) all += "\n  " + phrase;
  if (seen != expected) fail_msg("phrases were:%s", all.c_str());
}

void the_first_reason_stays(void **) {
  Detector d;
  assert_null(d.failures.failure(1));
  d.failures.mark_failed(1, "first");
  d.failures.mark_failed(1, "second");
  expect_failure(d.failures, 1, "first");
  d.failures.mark_unresponsive(2);  // timed out on, but not known to have failed
  assert_true(d.failures.unresponsive(2));
  assert_null(d.failures.failure(2));
  assert_false(d.failures.unresponsive(1));
}

void a_peer_on_this_host_whose_process_exited_has_failed(void **) {
  Detector d;
  const ProcessIdentity dead = exited_child();
  d.publish(1, d.addresses.host(), dead);
  assert_false(d.failures.check_peer_process(1));  // without a lookup deadline: address unknown, no judgement
  assert_int_equal(d.exchange.fetches, 0);
  assert_true(d.failures.check_peer_process(1, in_ms(5000)));
  expect_failure(d.failures, 1, exited_reason(dead));
  assert_true(d.failures.check_peer_process(1));
}

void a_running_peer_or_one_on_another_host_is_not_judged(void **) {
  Detector d;
  d.publish(1, d.addresses.host(), xffl::comm::ucx::this_process());
  d.publish(2, "another-host/boot", exited_child());  // its pid means nothing here
  assert_false(d.failures.check_peer_process(1, in_ms(5000)));
  assert_false(d.failures.check_peer_process(2, in_ms(5000)));
  assert_null(d.failures.failure(1));
  assert_null(d.failures.failure(2));
}

void the_liveness_check_looks_an_address_up_once(void **) {
  Detector d;
  assert_false(d.failures.check_peer_process(1, in_ms(20)));  // not published yet: the lookup times out
  assert_int_equal(d.exchange.fetches, 1);
  const ProcessIdentity dead = exited_child();
  d.publish(1, d.addresses.host(), dead);
  assert_false(d.failures.check_peer_process(1, in_ms(5000)));  // not asked again
  assert_int_equal(d.exchange.fetches, 1);
  // known_failures looks up what it lacks, and then sees the process gone.
  expect_phrases(d.failures.known_failures({0, 1}, -1, in_ms(5000)),
                 {"rank 1 is known to have failed (" + exited_reason(dead) + ")"});
  assert_int_equal(d.exchange.fetches, 2);
}

void a_malformed_address_is_ignored_by_the_liveness_check(void **) {
  Detector d;
  d.exchange.publish(xffl::comm::ucx::address_key(1), {0xff, 0xff, 1});
  assert_false(d.failures.check_peer_process(1, in_ms(5000)));
  assert_null(d.failures.failure(1));
}

void known_failures_name_departed_and_exited_members(void **) {
  Detector d;
  const ProcessIdentity dead = exited_child();
  d.publish(1, d.addresses.host(), xffl::comm::ucx::this_process());  // running
  d.publish(3, d.addresses.host(), dead);                              // exited, but excluded below
  d.exchange.departed = {kMe, 2, 4, kWorld + 3};                       // self and out of range are ignored
  expect_phrases(d.failures.known_failures({0, 1, 2, 3}, 3, in_ms(5000)),
                 {"rank 2 is known to have failed (it left the job: its store connection closed)"});
  expect_failure(d.failures, 4, "it left the job: its store connection closed");  // not a member, still marked
  assert_null(d.failures.failure(kMe));
  assert_null(d.failures.failure(3));  // excluded: not looked at
  assert_null(d.failures.failure(1));
  // Rank 1 was looked up (known now); 2 was not (already failed), nor 3 (excluded).
  assert_int_equal(d.exchange.fetches, 1);
}

void a_store_that_cannot_be_asked_is_reported_and_nothing_more_is_asked(void **) {
  Detector d;
  d.exchange.store_gone = true;
  d.publish(1, d.addresses.host(), exited_child());
  expect_phrases(d.failures.known_failures({0, 1, 2}, -1, in_ms(5000)),
                 {"could not ask the store which ranks left: rank 0: lost the store at 127.0.0.1:1 while asking "
                  "which ranks left the job"});
  assert_int_equal(d.exchange.fetches, 0);
}

void a_failed_lookup_is_reported_and_no_other_is_tried(void **) {
  Detector d;  // nothing published: the first lookup times out
  const auto phrases = d.failures.known_failures({0, 1, 2, 3}, -1, in_ms(50));
  assert_int_equal(phrases.size(), 1);
  if (phrases[0].rfind("could not look up rank 1: ", 0) != 0) fail_msg("phrase: %s", phrases[0].c_str());
  assert_int_equal(d.exchange.fetches, 1);
}

void ucx_reports_mark_the_peer_failed(void **) {
  Detector d;
  const ucp_err_handler_t handler = d.failures.error_handler(2);
  handler.cb(handler.arg, nullptr, UCS_ERR_CONNECTION_RESET);
  expect_failure(d.failures, 2,
                 std::string("UCX reported ") + xffl::comm::ucx::ucx().ucs_status_string(UCS_ERR_CONNECTION_RESET));
  assert_null(d.failures.failure(1));
}

}  // namespace

void only_real_evidence_confirms_a_failure(void **) {
  Detector d;
  d.failures.mark_given_up(1, "abandoned after a failed allreduce on world group");
  expect_failure(d.failures, 1, "abandoned after a failed allreduce on world group");
  assert_false(d.failures.confirmed(1));  // a slow rank is not dead: never announced
  d.failures.mark_failed(2, "UCX reported Connection reset by remote peer");
  assert_true(d.failures.confirmed(2));
  const ProcessIdentity dead = exited_child();
  d.publish(3, d.addresses.host(), dead);
  assert_true(d.failures.check_peer_process(3, in_ms(5000)));
  assert_true(d.failures.confirmed(3));
  assert_false(d.failures.confirmed(4));
}

void the_address_table_serves_liveness_checks_without_the_store(void **) {
  Detector d;
  const ProcessIdentity dead = exited_child();
  for (int rank = 0; rank < kWorld; ++rank)
    d.publish(rank, d.addresses.host(), rank == 3 ? dead : xffl::comm::ucx::this_process());
  d.addresses.look_up_all(in_ms(5000));
  // Every rank once, this one's included: a group's members decide whether they share a host from
  // the published entries alone (ucx_communicator.cpp), so no collective needs the store later.
  assert_int_equal(d.exchange.fetches, kWorld);
  assert_non_null(d.addresses.known(4));
  d.exchange.store_gone = true;
  assert_true(d.failures.check_peer_process(3));  // no lookup deadline needed: the table has it
  expect_failure(d.failures, 3, exited_reason(dead));
  assert_false(d.failures.check_peer_process(4));
  assert_int_equal(d.exchange.fetches, kWorld);
}

void the_revoke_tag_is_no_message_of_a_group(void **) {
  using namespace xffl::comm::ucx;
  const uint64_t groups[] = {0, 1, kGroupTagLimit / 2, kGroupTagLimit - 1};
  for (uint64_t group : groups) {
    // Data receives (kReceiveMask) name their sender, below the group's size (at most kMaxGroupSize).
    for (uint64_t sender : {uint64_t{0}, uint64_t{7}, kMaxGroupSize - 1})
      for (int step : {0, 255})
        assert_true((kRevokeTag & kReceiveMask) != (message_tag(group, 255, sender, 0, step) & kReceiveMask));
    // Mismatch notices and their probes (sender kNoticeSender).
    assert_true((kRevokeTag & kGroupNoticeMask) != (notice_tag(group, 255) & kGroupNoticeMask));
  }
  // The revoke sender is past every member index.
  assert_true(sender_of(kRevokeTag) >= kMaxGroupSize);
  assert_true(sender_of(kRevokeTag) < kNoticeSender);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(the_first_reason_stays),
      cmocka_unit_test(a_peer_on_this_host_whose_process_exited_has_failed),
      cmocka_unit_test(a_running_peer_or_one_on_another_host_is_not_judged),
      cmocka_unit_test(the_liveness_check_looks_an_address_up_once),
      cmocka_unit_test(a_malformed_address_is_ignored_by_the_liveness_check),
      cmocka_unit_test(known_failures_name_departed_and_exited_members),
      cmocka_unit_test(a_store_that_cannot_be_asked_is_reported_and_nothing_more_is_asked),
      cmocka_unit_test(a_failed_lookup_is_reported_and_no_other_is_tried),
      cmocka_unit_test(ucx_reports_mark_the_peer_failed),
      cmocka_unit_test(only_real_evidence_confirms_a_failure),
      cmocka_unit_test(the_address_table_serves_liveness_checks_without_the_store),
      cmocka_unit_test(the_revoke_tag_is_no_message_of_a_group),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
