/**
 * @file xffl/request.h
 * @brief Nonblocking calls: a request in flight, its test, its wait and its end.
 *
 * A request comes from a nonblocking call (xffl_federated_average_start,
 * xffl_federated_average_many_start). It runs the blocking call's own schedule, unchanged, on a
 * thread the request owns, so its result is the blocking call's, bit for bit, with every strategy,
 * wire format and transport; the caller's thread goes on (training the next step) meanwhile. In
 * facility mode with XFFL_FACILITY_FAULTS_CONTINUE that schedule is the round protocol (a redo among
 * the survivors, the heal of a returning facility), run on the request's thread.
 *
 * While a request is in flight on a state (from its start until xffl_request_wait or
 * xffl_request_test reports it done, or xffl_request_free ends it):
 * - the buffers it was given must not be read or written by anyone (host or device);
 * - the getters of the state may be called: xffl_get_int, xffl_get_ints, xffl_get_master_addr,
 *   xffl_get_option, xffl_get_option_string, xffl_get_stream, xffl_get_group, xffl_get_mesh,
 *   xffl_get_communicating_processes, xffl_state_describe, and the group readers (xffl_group_size,
 *   xffl_group_rank, xffl_group_ranks, xffl_group_description);
 * - every other call on the state or its groups (collectives, averages, another start, xffl_set_*,
 *   xffl_unset_*, xffl_create_process_group, xffl_set_federated_weights) returns XFFL_ESTATE at once,
 *   naming the request's call, and changes nothing: the state's UCX worker and NCCL communicators
 *   are driven by one thread at a time, the request's.
 *
 * Completion follows the blocking call: with NCCL the work is ordered on the given stream and, by
 * default, waited for on the host by the request's thread; with XFFL_OPT_ENQUEUE_ONLY the request is
 * done once the work is enqueued (then order on the stream, as for the blocking call).
 * The log callback (xffl_set_log_callback) may be called from the request's thread.
 */
#ifndef XFFL_REQUEST_H
#define XFFL_REQUEST_H

#include "types.h"

XFFL_BEGIN_DECLS

/** Opaque nonblocking request: owned by the caller from its start until xffl_request_free. */
typedef struct xffl_request xffl_request_t;

/**
 * @brief Whether the request is done; if so, its result.
 * @param[in] req the request
 * @param[out] done 1 when the request is done (its buffers may be used again and the state takes
 *             every call again), 0 while it is in flight
 * @return XFFL_OK while in flight (*done = 0), or done and successful (*done = 1); once done, the
 *         status the blocking call would have returned, with its message (*done = 1): XFFL_EINVAL
 *         (ranks that disagree on count or dtype, an integer dtype with weights set), XFFL_ETIMEOUT,
 *         XFFL_EPEER, XFFL_EBACKEND, XFFL_ENOMEM, XFFL_EINTERNAL; XFFL_EINVAL (NULL req or done;
 *         *done is then not written). A done request answers the same again.
 * @note Local and never blocks. May be called from any thread, but not at the same time as
 *       xffl_request_free on the same request.
 */
XFFL_API xffl_status_t xffl_request_test(xffl_request_t *req, int *done);

/**
 * @brief Waits until the request is done and returns its result.
 *
 * The wait sleeps (it does not spin the caller's core; with NCCL the request's thread waits for the
 * stream as the blocking call does). It is bounded as the blocking call is: every
 * wait of the schedule ends within the timeout (XFFL_OPT_TIMEOUT_MS), so a peer that is gone gives
 * XFFL_EPEER or XFFL_ETIMEOUT with a message naming the rank, the group and what was awaited, never
 * a hang.
 * @param[in] req the request
 * @return XFFL_OK; the status the blocking call would have returned, with its message: XFFL_EINVAL
 *         (ranks that disagree on count or dtype, an integer dtype with weights set), XFFL_ETIMEOUT,
 *         XFFL_EPEER, XFFL_EBACKEND, XFFL_ENOMEM, XFFL_EINTERNAL; XFFL_EINVAL (NULL req). A done
 *         request answers the same again at once.
 * @note May be called from any thread, but not at the same time as xffl_request_free on the same
 *       request; valid after the request's state was destroyed.
 */
XFFL_API xffl_status_t xffl_request_wait(xffl_request_t *req);

/**
 * @brief Ends a request. NULL-safe.
 *
 * A request still in flight is first waited for, as by xffl_request_wait (bounded by the timeout), and
 * its result discarded: the buffers are the caller's again and the state takes every call again when
 * this returns. Nothing leaks and no thread is left behind.
 * @param[in] req the request, or NULL; must not be used afterwards
 * @note Must not overlap another call on the same request. May come before or after the destroy of
 *       the request's state: xffl_state_destroy with a request in flight first waits for its run to
 *       end (bounded by the timeout), and the request then still answers test and wait with its result
 *       until freed.
 */
XFFL_API void xffl_request_free(xffl_request_t *req);

XFFL_END_DECLS

#endif /* XFFL_REQUEST_H */
