/**
 * @file xffl/log.h
 * @brief Routing the library's own log lines into the host application's logger.
 *
 * By default every log line goes to stderr as "[xffl rank 3] INFO: rendezvous took 12.3 ms". A host
 * application with its own logger installs a callback instead (libgit2's git_trace_set shape). Which
 * lines exist is chosen per state by XFFL_OPT_LOG_LEVEL (or XFFL_LOG_LEVEL); the callback only
 * changes where they go.
 */
#ifndef XFFL_LOG_H
#define XFFL_LOG_H

#include "types.h"

XFFL_BEGIN_DECLS

/**
 * @brief Receives one log line of the library.
 * @param[in] level the line's level (XFFL_LOG_ERROR .. XFFL_LOG_DEBUG).
 * @param[in] rank the global rank of the state that wrote the line, or -1 when it is not known yet.
 * @param[in] message the text, without the "[xffl rank N] LEVEL: " prefix and without a newline;
 *            never NULL, valid only during the call (copy it to keep it).
 * @param[in] user_data the pointer given to xffl_set_log_callback, unchanged.
 * @note Called from whichever thread writes the line: a thread calling into xffl, or one of the
 *       library's own threads (rank 0's rendezvous store server, UCX's threads). Calls never overlap:
 *       lines are delivered one at a time, whole. The callback must not call any xffl function (one
 *       that does anyway gets XFFL_ESTATE from xffl_set_log_callback, and the lines it causes go to
 *       stderr), must not throw or longjmp across the library, and should return quickly: other
 *       threads that log wait for it.
 */
typedef void (*xffl_log_callback_t)(xffl_log_level_t level, int rank, const char *message, void *user_data);

/**
 * @brief Sends every later log line of the library, from every state of the process, to @p callback
 *        instead of stderr.
 * @param[in] callback the receiver; NULL restores the default (stderr).
 * @param[in] user_data handed to every call of @p callback (may be NULL); not owned: it must stay
 *            valid until the callback is replaced or removed.
 * @return XFFL_OK; XFFL_ESTATE when called from inside the log callback (nothing changes then).
 * @note Process-wide, like libgit2's git_trace_set. Thread-safe: it may be called from any thread
 *       except from inside the callback itself, at any time, with states in use. Once it returns, no
 *       line reaches the previous callback any more (a line being delivered finishes first), so the
 *       previous user_data may then be freed.
 */
XFFL_API xffl_status_t xffl_set_log_callback(xffl_log_callback_t callback, void *user_data);

XFFL_END_DECLS

#endif /* XFFL_LOG_H */
