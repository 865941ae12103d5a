/**
 * @file xffl/status.h
 * @brief Status strings and the thread-local last-error message.
 */
#ifndef XFFL_STATUS_H
#define XFFL_STATUS_H

#include "types.h"

XFFL_BEGIN_DECLS

/**
 * @brief Short name and meaning of a status ("XFFL_EINVAL: invalid argument").
 * @param[in] status any integer; unknown values give "XFFL_UNKNOWN: unknown status".
 * @return a static string, never NULL.
 * @note Thread-safe.
 */
XFFL_API const char *xffl_status_string(xffl_status_t status);

/**
 * @brief The message of the last failed xffl call on this thread.
 * @return a thread-local string, never NULL: empty if no call on this thread has failed yet.
 *         It stays valid until the next failing xffl call on the same thread.
 * @note Thread-safe: each thread has its own message. Successful calls leave the message unchanged.
 */
XFFL_API const char *xffl_last_error_message(void);

XFFL_END_DECLS

#endif /* XFFL_STATUS_H */
