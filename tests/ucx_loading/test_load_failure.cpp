// A UCX that cannot be loaded, or lacks a function, is XFFL_EUNSUPPORTED in the loader's words (never a
// crash), and a failed load leaves the host's signal handlers as they were (label unit).
#include <signal.h>

#include <cstring>
#include <string>

#include "comm/ucx/ucx_api.h"
#include "common/error.h"

// cmocka last: its fail() macro would rename xffl::fail.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

namespace {

void host_handler(int) {}

// The status and message open_ucx throws for `library`; fails the test when it loads.
xffl::Error load_error(const char *library) {
  try {
    (void)xffl::comm::ucx::open_ucx(library);
  } catch (const xffl::Error &error) {
    return error;
  }
  fail_msg("open_ucx(%s) succeeded", library);
  return xffl::Error(XFFL_OK, "");
}

void expect_words(const xffl::Error &error, const char *words) {
  if (!std::strstr(error.what(), words)) fail_msg("message '%s' lacks '%s'", error.what(), words);
}

void test_missing_library(void **) {
  const xffl::Error error = load_error("libxffl-test-no-such-ucx.so.0");
  assert_int_equal(error.status(), XFFL_EUNSUPPORTED);
  expect_words(error, "libxffl-test-no-such-ucx.so.0");  // dlerror's words name the file
  expect_words(error, "UCX could not be loaded");
}

void test_library_without_ucx(void **) {
  const xffl::Error error = load_error("libc.so.6");
  assert_int_equal(error.status(), XFFL_EUNSUPPORTED);
  expect_words(error, "lacks ucp_config_read");
}

void test_failed_load_keeps_handlers(void **) {
  struct sigaction mine {};
  mine.sa_handler = host_handler;
  sigemptyset(&mine.sa_mask);
  assert_int_equal(sigaction(SIGSEGV, &mine, nullptr), 0);
  (void)load_error("libxffl-test-no-such-ucx.so.0");
  struct sigaction now {};
  assert_int_equal(sigaction(SIGSEGV, nullptr, &now), 0);
  assert_ptr_equal(reinterpret_cast<void *>(now.sa_handler), reinterpret_cast<void *>(host_handler));
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_missing_library),
      cmocka_unit_test(test_library_without_ucx),
      cmocka_unit_test(test_failed_load_keeps_handlers),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
