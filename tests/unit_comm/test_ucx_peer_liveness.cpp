// How the UCX backend tells that a peer is gone, in one process: /proc liveness of a running, an
// exited-and-reaped, an exited-but-unreaped (zombie) and a reused-pid process; which ucp_ep_create
// statuses are the peer's fault; the UCX log filter (a FATAL line from CMA does not abort and is kept
// for the error message; redirected lines reach their sink); collectives whose peer's published
// process has exited: EPEER at once when waiting on it, and a timeout on a survivor that names it;
// and a timeout that names a rank the store says has left (any host), or says the store is gone.
// The published address's wire format is tested in test_ucx_address.cpp, the detector's rules on
// their own in test_ucx_failure_detector.cpp.
#include <sys/wait.h>
#include <ucs/config/global_opts.h>
#include <unistd.h>

#include "comm/ucx/process_identity.h"
#include "comm/ucx/ucx_log_filter.h"
#include "comm/ucx/peer_failure_detector.h"
#include "comm/ucx/ucx_address.h"
#include "ucx_harness.h"

// cmocka last: its fail() macro would rewrite xffl::fail in the headers above.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

namespace {

using xffl::comm::ucx::Liveness;
using xffl::comm::ucx::ProcessIdentity;

void expect_contains(const std::string &text, const std::string &part) {
  if (text.find(part) == std::string::npos) fail_msg("\"%s\" does not contain \"%s\"", text.c_str(), part.c_str());
}

// A child that exits at once; reaped (gone from /proc) unless keep_zombie.
ProcessIdentity exited_child(bool keep_zombie, pid_t *pid_out) {
  const pid_t pid = fork();
  if (pid == 0) _exit(0);
  assert_true(pid > 0);
  ProcessIdentity identity = xffl::comm::ucx::this_process();
  identity.pid = pid;
  if (keep_zombie) {
    siginfo_t info{};
    assert_int_equal(waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT), 0);  // exited, not reaped
  } else {
    assert_int_equal(waitpid(pid, nullptr, 0), pid);
  }
  *pid_out = pid;
  return identity;
}

void liveness_sees_exited_processes(void **) {
  const ProcessIdentity self = xffl::comm::ucx::this_process();
  assert_int_equal(static_cast<int>(xffl::comm::ucx::process_liveness(self, self)), static_cast<int>(Liveness::alive));

  pid_t pid = 0;
  const ProcessIdentity reaped = exited_child(false, &pid);
  assert_int_equal(static_cast<int>(xffl::comm::ucx::process_liveness(reaped, self)), static_cast<int>(Liveness::gone));

  const ProcessIdentity zombie = exited_child(true, &pid);
  assert_int_equal(static_cast<int>(xffl::comm::ucx::process_liveness(zombie, self)), static_cast<int>(Liveness::gone));
  assert_int_equal(waitpid(pid, nullptr, 0), pid);

  ProcessIdentity reused = self;  // our pid, but a process that started at another time
  reused.start_ticks += 1;
  assert_int_equal(static_cast<int>(xffl::comm::ucx::process_liveness(reused, self)), static_cast<int>(Liveness::gone));

  ProcessIdentity elsewhere = self;  // another pid namespace: its pids mean nothing here
  elsewhere.pid_namespace = "pid:[1]";
  assert_int_equal(static_cast<int>(xffl::comm::ucx::process_liveness(elsewhere, self)),
                   static_cast<int>(Liveness::unknown));
  assert_int_equal(static_cast<int>(xffl::comm::ucx::process_liveness(ProcessIdentity(), self)),
                   static_cast<int>(Liveness::unknown));
}

void connection_failures_caused_by_the_peer_are_peer_failures(void **) {
  for (ucs_status_t status : {UCS_ERR_SHMEM_SEGMENT, UCS_ERR_ENDPOINT_TIMEOUT, UCS_ERR_UNREACHABLE,
                              UCS_ERR_CONNECTION_RESET, UCS_ERR_REJECTED, UCS_ERR_IO_ERROR})
    assert_true(xffl::comm::ucx::is_peer_side_failure(status));
  for (ucs_status_t status : {UCS_ERR_NO_MEMORY, UCS_ERR_INVALID_PARAM, UCS_ERR_UNSUPPORTED, UCS_ERR_NO_RESOURCE})
    assert_false(xffl::comm::ucx::is_peer_side_failure(status));
}

// UCX's default handler aborts on FATAL: reaching the asserts at all is the test.
void a_fatal_cma_line_is_kept_instead_of_aborting(void **) {
  xffl::comm::ucx::install_ucx_log_filter();
  xffl::comm::ucx::install_ucx_log_filter();  // idempotent
  (void)xffl::comm::ucx::take_transport_failure();
  ucs_log_dispatch("sm/scopy/cma/cma_ep.c", 81, "uct_cma_ep_tx_error", UCS_LOG_LEVEL_FATAL,
                   &ucs_global_opts.log_component, "process_vm_readv(pid=%d) returned -1: %s", 4242, "No such process");
  assert_string_equal(xffl::comm::ucx::take_transport_failure().c_str(),
                      "process_vm_readv(pid=4242) returned -1: No such process");
  assert_string_equal(xffl::comm::ucx::take_transport_failure().c_str(), "");  // taken once
}

void redirected_lines_reach_their_sink(void **) {
  xffl::comm::ucx::install_ucx_log_filter();
  std::vector<std::string> seen;
  {
    xffl::comm::ucx::RedirectUcxLines redirect(
        [&](const char *level, const std::string &where, const std::string &text) {
          seen.push_back(std::string(level) + " " + where + " " + text);
        });
    ucs_log_dispatch("core/flush.c", 26, "ucp_ep_flush_error", UCS_LOG_LEVEL_ERROR, &ucs_global_opts.log_component,
                     "error during flush: %s", "Endpoint timeout");
    ucs_log_dispatch("datastruct/mpool.c", 53, "ucs_mpool_cleanup", UCS_LOG_LEVEL_WARN,
                     &ucs_global_opts.log_component, "object %d was not returned", 7);
  }
  assert_int_equal(seen.size(), 2);
  assert_string_equal(seen[0].c_str(), "ERROR core/flush.c:26 error during flush: Endpoint timeout");
  assert_string_equal(seen[1].c_str(), "WARN datastruct/mpool.c:53 object 7 was not returned");
}

// Republishes `rank`'s address as if its process were `process` (same host, same worker address).
void pretend_process(harness::MemoryExchange &exchange, int rank, const ProcessIdentity &process) {
  const auto original = xffl::comm::ucx::decode_address(exchange.fetch(xffl::comm::ucx::address_key(rank), 1000));
  exchange.publish(xffl::comm::ucx::address_key(rank),
                   xffl::comm::ucx::encode_address(original.host, process, original.worker_address.data(),
                                                   original.worker_address.size()));
}

xffl::comm::algorithms::Tuning messages_only() {
  xffl::comm::algorithms::Tuning tuning;
  tuning.single_copy_on_host = xffl::comm::algorithms::SingleCopy::never;
  return tuning;
}

struct Seen {
  xffl_status_t status = XFFL_OK;
  std::string message;
};

// Ranks 0 .. world-2 are real; rank world-1 made its worker but "exited" (its published process is
// a reaped child). Rank 0 runs body; the others stay away until it is done. UCX messages only: the
// barriers below are the dissemination barrier, whose first step decides whom rank 0 waits on (on one
// host a barrier would otherwise set up and take the shared segment, comm/ucx/host_collectives.h).
template <typename Body>
Seen run_with_a_dead_last_rank(int world, int timeout_ms, Body &&body) {
  pid_t pid = 0;
  const ProcessIdentity dead = exited_child(false, &pid);
  harness::MemoryExchange exchange;
  harness::Latch published(world), done(1);
  Seen seen;
  std::vector<std::thread> threads;
  for (int rank = 0; rank < world; ++rank)
    threads.emplace_back([&, rank] {
      xffl::comm::UcxBackend backend(rank, world, exchange, timeout_ms, XFFL_LOG_ERROR);
      backend.set_tuning(messages_only());
      published.arrive();
      published.wait();
      if (rank != 0) {
        done.wait();
        return;
      }
      pretend_process(exchange, world - 1, dead);
      try {
        body(backend);
      } catch (const xffl::Error &error) {
        seen.status = error.status();
        seen.message = error.what();
      }
      done.arrive();
    });
  for (auto &thread : threads) thread.join();
  return seen;
}

// Rank 0 only receives from rank 1 in a pair barrier's first step or sends to it: either way it
// learns rank 1's process while waiting.
void waiting_on_a_peer_whose_process_exited_fails_at_once(void **) {
  const Seen seen = run_with_a_dead_last_rank(2, 20000, [](xffl::comm::UcxBackend &backend) {
    auto group = harness::make_group(backend, {0, 1}, 0, "pair group", 3);
    group->barrier();
  });
  assert_int_equal(seen.status, XFFL_EPEER);  // long before the 20 s timeout
  expect_contains(seen.message, "rank 0: rank 1 failed (its process (pid ");
  expect_contains(seen.message, "on this host) has exited) in barrier on pair group (step ");
}

void a_timeout_on_a_survivor_names_the_member_that_exited(void **) {
  // Rank 1 is alive but never takes part; rank 2 has exited. Members in the order {0, 2, 1}: the
  // barrier's first step (the third member folding into the first) has rank 0 wait on rank 1, so
  // it times out on a survivor and must say that rank 2 is gone.
  const Seen seen = run_with_a_dead_last_rank(3, 1000, [](xffl::comm::UcxBackend &backend) {
    auto group = harness::make_group(backend, {0, 2, 1}, 0, "world group", 1);
    group->barrier();
  });
  assert_int_equal(seen.status, XFFL_ETIMEOUT);
  expect_contains(seen.message, "rank 0: timed out after 1000 ms in barrier on world group waiting for rank 1 (step 1 of 2)"
                                "; rank 2 is known to have failed (its process (pid ");
}

// The test exchange, plus what a store would answer about departed ranks: a fixed list, or the
// error of a store that is gone.
class StoreLikeExchange final : public xffl::comm::Exchange {
 public:
  explicit StoreLikeExchange(std::vector<int> departed, bool store_gone = false)
      : departed_(std::move(departed)), store_gone_(store_gone) {}
  void publish(const std::string &key, const std::vector<uint8_t> &value) override { inner_.publish(key, value); }
  std::vector<uint8_t> fetch(const std::string &key, int timeout_ms) override { return inner_.fetch(key, timeout_ms); }
  std::vector<int> departed_ranks(int) override {
    if (store_gone_)
      (xffl::fail)(XFFL_EPEER, "rank 0: lost the store at 127.0.0.1:1 while asking which ranks left the job");
    return departed_;
  }
  xffl::comm::GroupIdentity claim_group(const std::vector<int> &members, uint32_t creation, int timeout_ms) override {
    return inner_.claim_group(members, creation, timeout_ms);
  }
  void release_group(uint32_t slot) noexcept override { inner_.release_group(slot); }

 private:
  harness::MemoryExchange inner_;
  std::vector<int> departed_;
  bool store_gone_;
};

// Rank 0 runs a barrier on {0, 2, 1} while ranks 1 and 2 stay alive but away (rank 2 as if on another
// host: its process is running, only the store knows it left). Rank 0 waits on rank 1 and times out.
Seen time_out_with_exchange(StoreLikeExchange &exchange) {
  constexpr int kWorld = 3;
  harness::Latch published(kWorld), done(1);
  Seen seen;
  std::vector<std::thread> threads;
  for (int rank = 0; rank < kWorld; ++rank)
    threads.emplace_back([&, rank] {
      xffl::comm::UcxBackend backend(rank, kWorld, exchange, 1000, XFFL_LOG_ERROR);
      backend.set_tuning(messages_only());  // as in run_with_a_dead_last_rank
      published.arrive();
      published.wait();
      if (rank != 0) {
        done.wait();
        return;
      }
      try {
        auto group = harness::make_group(backend, {0, 2, 1}, 0, "world group", 1);
        group->barrier();
      } catch (const xffl::Error &error) {
        seen.status = error.status();
        seen.message = error.what();
      }
      done.arrive();
    });
  for (auto &thread : threads) thread.join();
  return seen;
}

void a_timeout_names_a_member_the_store_says_left(void **) {
  StoreLikeExchange exchange({2});
  const Seen seen = time_out_with_exchange(exchange);
  assert_int_equal(seen.status, XFFL_ETIMEOUT);
  expect_contains(seen.message, "rank 0: timed out after 1000 ms in barrier on world group waiting for rank 1 (step 1 of 2)"
                                "; rank 2 is known to have failed (it left the job: its store connection closed)");
  if (seen.message.find("rank 1 is known to have failed") != std::string::npos)
    fail_msg("rank 1 did not leave, yet: %s", seen.message.c_str());
}

void a_timeout_says_when_the_store_cannot_be_asked(void **) {
  StoreLikeExchange exchange({}, true);
  const Seen seen = time_out_with_exchange(exchange);
  assert_int_equal(seen.status, XFFL_ETIMEOUT);  // the original error, not the store's
  expect_contains(seen.message, "rank 0: timed out after 1000 ms in barrier on world group waiting for rank 1 (step 1 of 2)"
                                "; could not ask the store which ranks left: rank 0: lost the store at 127.0.0.1:1");
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(liveness_sees_exited_processes),
      cmocka_unit_test(connection_failures_caused_by_the_peer_are_peer_failures),
      cmocka_unit_test(a_fatal_cma_line_is_kept_instead_of_aborting),
      cmocka_unit_test(redirected_lines_reach_their_sink),
      cmocka_unit_test(waiting_on_a_peer_whose_process_exited_fails_at_once),
      cmocka_unit_test(a_timeout_on_a_survivor_names_the_member_that_exited),
      cmocka_unit_test(a_timeout_names_a_member_the_store_says_left),
      cmocka_unit_test(a_timeout_says_when_the_store_cannot_be_asked),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
