/* Shared helpers of the cmocka tests. Include after <setjmp.h>, <stdarg.h>, <stddef.h> and <cmocka.h>. */
#ifndef XFFL_TEST_H
#define XFFL_TEST_H

#include <stdio.h>

#include <xffl.h>

/* Fails the test with the status name and the library's message. */
#define assert_xffl_ok(expr)                                                                          \
  do {                                                                                                \
    xffl_status_t xffl_test_rc_ = (expr);                                                             \
    if (xffl_test_rc_ != XFFL_OK)                                                                     \
      fail_msg("%s returned %s (%s)", #expr, xffl_status_string(xffl_test_rc_), xffl_last_error_message()); \
  } while (0)

/* Asserts a specific failure status and prints the message when it differs. */
#define assert_xffl_status(expr, expected)                                                            \
  do {                                                                                                \
    xffl_status_t xffl_test_rc_ = (expr);                                                             \
    if (xffl_test_rc_ != (expected))                                                                  \
      fail_msg("%s returned %s, expected %s (%s)", #expr, xffl_status_string(xffl_test_rc_),           \
               xffl_status_string(expected), xffl_last_error_message());                              \
  } while (0)

#endif
