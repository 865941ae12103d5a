// The UCX worker of a crossing backend (UcxSettings::crossing, XFFL_CROSS_FACILITY_BACKEND=ucx): it
// stands beside the main UCX worker of the same rank in one store, under keys of its own, and its
// endpoints send every tag message eagerly (no rendezvous at any size), where the main worker's take
// rendezvous above UCX's threshold. What UCX chose is read from ucp_ep_print_info, UCX's own account
// of the endpoint's protocols. Two ranks in this thread, each with both workers.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "comm/ucx/ucx_address.h"
#include "comm/ucx/ucx_api.h"
#include "comm/ucx/ucx_worker.h"
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

constexpr int kWorld = 2;

UcxSettings settings_of(bool crossing) {
  UcxSettings settings;
  settings.timeout_ms = 300;  // bounds the flush at teardown
  settings.log_level = XFFL_LOG_ERROR;
  settings.crossing = crossing;
  return settings;
}

// UCX's description of rank 0's endpoint to rank 1 on `zero`'s worker: its line of tag sends.
std::string tag_send_protocols(UcxWorker &zero) {
  const ucp_ep_h endpoint = zero.endpoints().endpoint(1, Clock::now() + std::chrono::seconds(5));
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

struct Workers {
  xffl_test::MemoryExchange exchange;
  // Both workers of both ranks publish in one store: a crossing worker under its own keys.
  std::unique_ptr<UcxWorker> main_zero = std::make_unique<UcxWorker>(0, kWorld, exchange, settings_of(false));
  std::unique_ptr<UcxWorker> main_one = std::make_unique<UcxWorker>(1, kWorld, exchange, settings_of(false));
  std::unique_ptr<UcxWorker> crossing_zero = std::make_unique<UcxWorker>(0, kWorld, exchange, settings_of(true));
  std::unique_ptr<UcxWorker> crossing_one = std::make_unique<UcxWorker>(1, kWorld, exchange, settings_of(true));
};

void both_workers_publish_under_keys_of_their_own(void **) {
  Workers workers;
  for (int rank = 0; rank < kWorld; ++rank) {
    assert_false(workers.exchange.fetch(xffl::comm::ucx::address_key(rank), 1000).empty());
    assert_false(workers.exchange.fetch(xffl::comm::ucx::address_key(rank, true), 1000).empty());
  }
  assert_string_equal(xffl::comm::ucx::address_key(1, true).c_str(), "ucx/crossing/addr/1");
}

void the_crossing_worker_sends_every_message_eagerly(void **) {
  if (std::getenv("UCX_RNDV_THRESH")) skip();  // the environment's threshold wins on both workers
  Workers workers;
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
      cmocka_unit_test(both_workers_publish_under_keys_of_their_own),
      cmocka_unit_test(the_crossing_worker_sends_every_message_eagerly),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
