// Helpers of the bootstrap unit tests: outcomes of calls that may throw xffl::Error, ranks as threads,
// raw sockets that play strangers on the store's port.
#ifndef XFFL_TESTS_UNIT_BOOTSTRAP_TEST_H
#define XFFL_TESTS_UNIT_BOOTSTRAP_TEST_H

// Include this header last: cmocka defines a function-like macro fail() that would break any later
// header declaring a fail() (std::ios::fail, xffl::fail).
#include <exception>
#include <functional>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "common/error.h"

// clang-format off
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
extern "C" {  // Debian's cmocka.h declares its functions without C linkage for C++
#include <cmocka.h>
}
// clang-format on

#include "xffl_test.h"

namespace bootstrap_test {

struct Outcome {
  xffl_status_t status = XFFL_OK;
  std::string message;
  bool ok() const { return status == XFFL_OK; }
};

template <typename Body>
Outcome outcome_of(Body &&body) {
  try {
    body();
    return {};
  } catch (const xffl::Error &error) {
    return {error.status(), error.what()};
  } catch (const std::exception &error) {
    return {XFFL_EINTERNAL, std::string("unexpected exception: ") + error.what()};
  }
}

inline bool contains(const std::string &text, const std::string &part) { return text.find(part) != std::string::npos; }

// Fails the test (on the calling thread) unless the outcome has the status and every listed phrase.
inline void expect_failure(const Outcome &outcome, xffl_status_t status, const std::vector<std::string> &phrases) {
  if (outcome.status != status)
    fail_msg("expected %s, got %s: %s", xffl_status_string(status), xffl_status_string(outcome.status),
             outcome.message.c_str());
  for (const std::string &phrase : phrases)
    if (!contains(outcome.message, phrase))
      fail_msg("message \"%s\" lacks \"%s\"", outcome.message.c_str(), phrase.c_str());
}

inline void expect_ok(const Outcome &outcome) {
  if (!outcome.ok())
    fail_msg("expected success, got %s: %s", xffl_status_string(outcome.status), outcome.message.c_str());
}

// Runs body(rank) for each rank on its own thread and returns each rank's outcome. cmocka's asserts
// must stay on the main thread, so bodies report through exceptions only.
inline std::vector<Outcome> run_threads(int count, const std::function<void(int)> &body, int first = 0) {
  std::vector<Outcome> outcomes(static_cast<size_t>(count));
  std::vector<std::thread> threads;
  for (int i = 0; i < count; ++i)
    threads.emplace_back([&, i] { outcomes[static_cast<size_t>(i)] = outcome_of([&] { body(first + i); }); });
  for (std::thread &thread : threads) thread.join();
  return outcomes;
}

// A plain TCP connection to 127.0.0.1:port (asserts on failure); the caller closes it.
int connect_raw(int port);
// True when the other end closes the connection (EOF or reset) within timeout_ms; reads and
// discards whatever arrives before that.
bool closed_by_peer(int fd, int timeout_ms);
void send_raw(int fd, const std::vector<uint8_t> &bytes);

}  // namespace bootstrap_test

#endif
