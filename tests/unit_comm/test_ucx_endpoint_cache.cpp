// The UCX backend's endpoint cache (comm/ucx/endpoint_cache.h) and how UcxWorker gives up on a peer.
// Without a UCX worker: a peer known to have failed is refused before its address is even fetched;
// a malformed published address is refused naming the key; an address never published fails with
// the exchange's timeout. With two UCX workers in this thread: an endpoint is made once and kept;
// on this host it uses shared memory and does not track its requests unless failure detection on the
// host is asked for; a peer given up on (abandon_peer) is failed and never gets an endpoint again.
// A crossing backend's worker (UcxSettings::crossing, XFFL_CROSS_FACILITY_BACKEND=ucx) stands beside the
// main one of the same rank in one store, under keys of its own, and its endpoints send every tag
// message eagerly where the main worker's take a rendezvous above UCX's threshold (read from
// ucp_ep_print_info, UCX's own account of an endpoint's protocols).
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>

#include "comm/ucx/endpoint_cache.h"
#include "comm/ucx/ucx_address.h"
#include "comm/ucx/ucx_api.h"
#include "comm/ucx/ucx_worker.h"
#include "common/error.h"
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
using xffl::comm::ucx::UcxSettings;
using xffl::comm::ucx::UcxWorker;

constexpr int kWorld = 3;

Clock::time_point in_ms(int ms) { return Clock::now() + std::chrono::milliseconds(ms); }

UcxSettings quiet_settings(bool detection_on_host = false, bool crossing = false) {
  UcxSettings settings;
  settings.timeout_ms = 300;  // bounds the flush at teardown: the peer's worker is never progressed
  settings.log_level = XFFL_LOG_ERROR;
  settings.peer_failure_detection_on_host = detection_on_host;
  settings.crossing = crossing;
  return settings;
}

void expect_error(xffl_status_t status, const std::string &message, const std::function<void()> &call) {
  try {
    call();
  } catch (const xffl::Error &error) {
    if (error.status() != status || std::string(error.what()).find(message) == std::string::npos)
      fail_msg("got status %d \"%s\"; expected %d containing \"%s\"", error.status(), error.what(), status,
               message.c_str());
    return;
  }
  fail_msg("no error; expected %d containing \"%s\"", status, message.c_str());
}

// Rank 0's cache with no UCX worker behind it: enough for every refusal, which comes before UCX.
struct CacheWithoutUcx {
  xffl_test::MemoryExchange exchange;
  UcxSettings settings = quiet_settings();
  xffl::comm::ucx::PeerAddresses addresses{0, kWorld, exchange};
  xffl::comm::ucx::PeerFailureDetector failures{0, kWorld, exchange, addresses, settings};
  xffl::comm::ucx::EndpointCache endpoints{0, kWorld, nullptr, settings, addresses, failures};
};

void a_failed_peer_is_refused(void **) {
  CacheWithoutUcx c;
  c.failures.mark_failed(1, "it went away");
  // Refused before any lookup: nothing is published, yet the answer is EPEER, not a timeout.
  expect_error(XFFL_EPEER, "rank 0: rank 1 failed earlier (it went away)", [&] { c.endpoints.endpoint(1, in_ms(5000)); });
  assert_false(c.endpoints.shares_memory_with(1));
  assert_null(c.endpoints.close(1, true));  // no endpoint: nothing to close
  assert_true(c.endpoints.close_all().empty());
}

void a_malformed_address_is_refused(void **) {
  CacheWithoutUcx c;
  c.exchange.publish(xffl::comm::ucx::address_key(2), {3, 0, 'a', 'b'});  // cut inside the host
  expect_error(XFFL_EPEER, "rank 0: the address rank 2 published under ucx/addr/2 is malformed",
               [&] { c.endpoints.endpoint(2, in_ms(5000)); });
  assert_false(c.endpoints.shares_memory_with(2));
}

void an_address_never_published_times_out(void **) {
  CacheWithoutUcx c;
  expect_error(XFFL_ETIMEOUT, "ucx/addr/1", [&] { c.endpoints.endpoint(1, in_ms(50)); });
  assert_null(c.failures.failure(1));  // a slow peer is not a failed one
}

// Ranks 0 and 1 of a job of kWorld, in this thread; rank 2 never comes.
struct TwoWorkers {
  explicit TwoWorkers(bool detection_on_host = false)
      : zero(std::make_unique<UcxWorker>(0, kWorld, exchange, quiet_settings(detection_on_host))),
        one(std::make_unique<UcxWorker>(1, kWorld, exchange, quiet_settings(detection_on_host))) {}
  xffl_test::MemoryExchange exchange;
  std::unique_ptr<UcxWorker> zero;
  std::unique_ptr<UcxWorker> one;
};

void an_endpoint_is_made_once_and_kept(void **) {
  TwoWorkers workers;
  xffl::comm::ucx::EndpointCache &endpoints = workers.zero->endpoints();
  assert_false(endpoints.shares_memory_with(1));  // not made yet
  const ucp_ep_h first = endpoints.endpoint(1, in_ms(5000));
  assert_non_null(first);
  assert_ptr_equal(endpoints.endpoint(1, in_ms(5000)), first);
  // Same host, failure detection off: shared memory, and UCX does not track the requests.
  assert_true(endpoints.shares_memory_with(1));
  assert_false(endpoints.tracks_requests(1));
}

void an_abandoned_peer_never_gets_an_endpoint_again(void **) {
  TwoWorkers workers;
  UcxWorker &zero = *workers.zero;
  zero.endpoints().endpoint(1, in_ms(5000));
  assert_false(zero.abandon_peer(1, "gave up on it"));  // shared memory: outstanding sends are not completed
  assert_string_equal(zero.failures().failure(1)->c_str(), "gave up on it");
  assert_false(zero.endpoints().shares_memory_with(1));
  expect_error(XFFL_EPEER, "rank 0: rank 1 failed earlier (gave up on it)",
               [&] { zero.endpoints().endpoint(1, in_ms(5000)); });
  // A peer without an endpoint is given up on all the same.
  assert_true(zero.abandon_peer(2, "never came"));
  expect_error(XFFL_EPEER, "rank 0: rank 2 failed earlier (never came)", [&] { zero.endpoints().endpoint(2, in_ms(5000)); });
}

void with_detection_on_the_host_endpoints_track_their_requests(void **) {
  TwoWorkers workers(true);
  UcxWorker &zero = *workers.zero;
  zero.endpoints().endpoint(1, in_ms(5000));
  assert_false(zero.endpoints().shares_memory_with(1));
  assert_true(zero.endpoints().tracks_requests(1));
  assert_true(zero.abandon_peer(1, "gave up on it"));  // UCX completes what was outstanding to it
  assert_non_null(zero.failures().failure(1));
}

// Rank 0's and rank 1's main and crossing workers, in one store and this thread.
struct MainAndCrossingWorkers {
  xffl_test::MemoryExchange exchange;
  std::unique_ptr<UcxWorker> main_zero = std::make_unique<UcxWorker>(0, kWorld, exchange, quiet_settings());
  std::unique_ptr<UcxWorker> main_one = std::make_unique<UcxWorker>(1, kWorld, exchange, quiet_settings());
  std::unique_ptr<UcxWorker> crossing_zero =
      std::make_unique<UcxWorker>(0, kWorld, exchange, quiet_settings(false, true));
  std::unique_ptr<UcxWorker> crossing_one =
      std::make_unique<UcxWorker>(1, kWorld, exchange, quiet_settings(false, true));
};

// UCX's description of `zero`'s endpoint to rank 1: its line of tag sends.
std::string tag_send_protocols(UcxWorker &zero) {
  const ucp_ep_h endpoint = zero.endpoints().endpoint(1, in_ms(5000));
  char *text = nullptr;
  size_t length = 0;
  FILE *stream = open_memstream(&text, &length);
  assert_non_null(stream);
  xffl::comm::ucx::ucx().ucp_ep_print_info(endpoint, stream);
  std::fclose(stream);
  const std::string all(text, length);
  std::free(text);
  const size_t at = all.find("tag_send:");
  if (at == std::string::npos) fail_msg("no tag_send line in UCX's endpoint description:\n%s", all.c_str());
  return all.substr(at, all.find('\n', at) - at);
}

void a_crossing_worker_publishes_under_keys_of_its_own(void **) {
  MainAndCrossingWorkers workers;
  for (int rank = 0; rank < 2; ++rank) {
    assert_false(workers.exchange.fetch(xffl::comm::ucx::address_key(rank), 1000).empty());
    assert_false(workers.exchange.fetch(xffl::comm::ucx::address_key(rank, true), 1000).empty());
  }
  assert_string_equal(xffl::comm::ucx::address_key(1, true).c_str(), "ucx/crossing/addr/1");
}

void a_crossing_worker_sends_every_message_eagerly(void **) {
  if (std::getenv("UCX_RNDV_THRESH")) skip();  // the environment's threshold wins on both workers
  MainAndCrossingWorkers workers;
  const std::string main_line = tag_send_protocols(*workers.main_zero);
  const std::string crossing_line = tag_send_protocols(*workers.crossing_zero);
  if (main_line.find("rndv") == std::string::npos)
    fail_msg("the main worker's tag sends take no rendezvous: %s", main_line.c_str());
  if (crossing_line.find("rndv") != std::string::npos)
    fail_msg("the crossing worker's tag sends take a rendezvous: %s", crossing_line.c_str());
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_failed_peer_is_refused),
      cmocka_unit_test(a_malformed_address_is_refused),
      cmocka_unit_test(an_address_never_published_times_out),
      cmocka_unit_test(an_endpoint_is_made_once_and_kept),
      cmocka_unit_test(an_abandoned_peer_never_gets_an_endpoint_again),
      cmocka_unit_test(with_detection_on_the_host_endpoints_track_their_requests),
      cmocka_unit_test(a_crossing_worker_publishes_under_keys_of_its_own),
      cmocka_unit_test(a_crossing_worker_sends_every_message_eagerly),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
