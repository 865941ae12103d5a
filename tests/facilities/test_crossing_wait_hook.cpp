// The crossing backend's wait hook (comm/crossing_wait_hook.h), the seam through which a federation
// coordinator ends a cross-facility wait when it declares a facility lost: two wan ranks (threads,
// loopback) average once; then rank 0 starts a second average that rank 1 never joins, and the check
// set on rank 0's hook ends that wait with its own status and message, long before the timeout. The
// check runs on every iteration of the wait (it throws only at its third call).

#include <atomic>
#include <future>
#include <thread>
#include <vector>

#include "comm/wan/wan_backend.h"
#include "common/error.h"
#include "memory_exchange.h"

// cmocka after the C++ headers: its fail() macro would clash with xffl::fail.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {  // cmocka has no extern "C" of its own
#include <cmocka.h>
}

using namespace xffl;
using namespace xffl::comm;

namespace {

void hook_ends_a_crossing_wait(void **) {
  auto exchange = std::make_shared<xffl_test::MemoryExchange>();
  auto hook = std::make_shared<CrossingWaitHook>();
  std::promise<void> rank0_done;
  std::shared_future<void> rank0_finished = rank0_done.get_future().share();
  xffl_status_t second_status = XFFL_OK;
  std::string second_message, errors[2];
  std::atomic<int> polls{0};
  auto rank_body = [&](int rank) {
    try {
      wan::WanSettings settings;
      settings.rank = rank;
      settings.world_size = 2;
      settings.timeout_ms = 60000;  // the hook, not the timeout, ends the wait
      settings.streams = 2;
      settings.store_host = "127.0.0.1";
      settings.publish_lazily = true;
      if (rank == 0) settings.wait_hook = hook;
      WanBackend backend(settings, exchange);
      GroupSpec spec{topology::RankList::progression(0, 1, 2), rank, "federated group", 7};
      spec.crosses_facilities = true;
      std::unique_ptr<Communicator> communicator = backend.create_communicator(spec);
      std::vector<float> x(1000, static_cast<float>(rank + 1));
      communicator->allreduce(x.data(), x.data(), x.size(), XFFL_F32, XFFL_SUM, nullptr);
      if (x[999] != 3.0f) (xffl::fail)(XFFL_EINTERNAL, "rank ", rank, ": the first average gave ", x[999]);
      if (rank == 1) {  // keeps its streams open, and never joins the second average
        rank0_finished.wait();
        return;
      }
      hook->set([&] {
        if (++polls >= 3) (xffl::fail)(XFFL_EPEER, "facility 1 was declared lost by the federation");
      });
      try {
        communicator->allreduce(x.data(), x.data(), x.size(), XFFL_F32, XFFL_SUM, nullptr);
      } catch (const Error &error) {
        second_status = error.status();
        second_message = error.what();
      }
      rank0_done.set_value();
    } catch (const Error &error) {
      errors[rank] = error.what();
      if (rank == 0) rank0_done.set_value();
    }
  };
  std::thread zero(rank_body, 0), one(rank_body, 1);
  zero.join();
  one.join();
  if (!errors[0].empty() || !errors[1].empty()) fail_msg("%s | %s", errors[0].c_str(), errors[1].c_str());
  assert_int_equal(second_status, XFFL_EPEER);
  assert_non_null(strstr(second_message.c_str(), "facility 1 was declared lost by the federation"));
  assert_non_null(strstr(second_message.c_str(), "rank 0"));  // the failure names this rank and the group
  assert_true(polls.load() >= 3);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {cmocka_unit_test(hook_ends_a_crossing_wait)};
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
