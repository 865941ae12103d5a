/**
 * @file xffl/federated.h
 * @brief Federated averaging: make every copy of every shard identical across federated groups.
 *
 * After a successful call every replica in every federated group holds the same bytes: the mean over
 * federated groups (weighted by xffl_set_federated_weights if set). Strategy: XFFL_OPT_FEDERATED_STRATEGY.
 * Collective over the whole job: every rank calls it with the same count and dtype.
 * Completion and the CUDA device as for the collectives (collective.h): with NCCL the work is ordered
 * on the stream and waited for on the host, bounded by the timeout, before the call returns.
 *
 * Facility mode with XFFL_FACILITY_FAULTS_CONTINUE (XFFL_OPT_FACILITY_FAULTS): the averages, blocking
 * and nonblocking, are collective over the facility's job and the live facilities. A lost facility does
 * not fail the others: the round is redone among the survivors (the result is the mean over the
 * facilities of XFFL_ATTR_LIVE_FACILITIES), and a facility that returns gets the current model from its
 * first average (its input is not used) and XFFL_ATTR_FEDERATION_ROUND, the round to resume after. The
 * round's contributing facilities cross in XFFL_OPT_WIRE_FORMAT (exact with one of them); the model a
 * returning facility receives is exact f32. With NCCL (device memory) each crossing rank copies its
 * values to host memory on the stream, runs the round there and copies the committed result back (one
 * host copy of the values for the length of the call; the caller's buffers change only on success);
 * the relay inside the facility stays on device memory. One exception: when that copy back itself fails
 * (a device error) after the round committed, the call fails on every rank of the facility with that
 * error, the round counts for the other facilities, and the crossing ranks' buffers may hold part of
 * the result (the other ranks' are unchanged); the facility's next successful average makes its
 * copies identical again.
 */
#ifndef XFFL_FEDERATED_H
#define XFFL_FEDERATED_H

#include <stddef.h>

#include "request.h"
#include "types.h"

XFFL_BEGIN_DECLS

/**
 * @brief Average one buffer (this rank's shard) across federated groups, in place.
 * @param[in] st the state, with federated scaling
 * @param[in,out] buf count elements of dtype: this rank's shard, replaced by the average; may be NULL
 *                when count is 0
 * @param[in] count number of elements; the same on every rank
 * @param[in] dtype element type of buf; the same on every rank (floating point when weights are set)
 * @param[in] stream backend NCCL: buf is device memory and the work is ordered on this cudaStream_t
 *            (NULL: the pool's stream 0 of xffl_set_exec_device); other backends: NULL
 * @return XFFL_OK; XFFL_EINVAL (NULL st, NULL buf with count > 0, unknown dtype, a byte size that
 *         overflows size_t, a stream with a host backend, an integer dtype with weights set, strategy
 *         XFFL_FEDAVG_FLAT with unequal federated group sizes, or, with UCX, ranks that disagree on
 *         count or dtype); XFFL_ESTATE (no federated scaling, or another call on the state is in progress);
 *         XFFL_EUNSUPPORTED; XFFL_ETIMEOUT; XFFL_EPEER; XFFL_EBACKEND; XFFL_EQUORUM (facility mode with
 *         XFFL_FACILITY_FAULTS_CONTINUE: fewer facilities than the quorum remain, on every rank of every
 *         survivor; also on every rank of a facility whose store has not answered it for a lease TTL
 *         by the end of the call's timeout: cut off, it counts no quorum); XFFL_EAUTH (in that mode: the model received by a returning facility failed its
 *         keyed hash, and was not used).
 * @note Collective over the whole job; calls on one state and its groups must not overlap
 *       (collective.h, Threads).
 */
XFFL_API xffl_status_t xffl_federated_average(xffl_state_t *st, void *buf, size_t count, xffl_dtype_t dtype,
                                              void *stream);

/**
 * @brief Average several buffers, coalesced into size-balanced buckets; each buffer is updated in place.
 *
 * Buffers under 16 MiB travel in buckets of up to 16 MiB: copied into one scratch buffer (device
 * memory from cudaMallocAsync on the stream with NCCL), averaged, and copied back exactly; larger ones
 * are averaged in place.
 * @param[in] st the state, with federated scaling
 * @param[in] bufs n buffers, each updated in place; bufs[i] may be NULL when counts[i] is 0; bufs may
 *            be NULL when n is 0
 * @param[in] counts n element counts; may be NULL when n is 0
 * @param[in] n number of buffers; the same on every rank, as are counts
 * @param[in] dtype element type of every buffer
 * @param[in] stream as for xffl_federated_average
 * @return XFFL_OK; XFFL_EINVAL (as xffl_federated_average, and NULL bufs or counts with n > 0, or
 *         counts[i] times the element size, or their sum, not fitting in size_t: the message names the
 *         buffer, and no buffer is touched); XFFL_ESTATE; XFFL_EUNSUPPORTED; XFFL_ETIMEOUT;
 *         XFFL_EPEER; XFFL_EBACKEND; XFFL_EQUORUM; XFFL_EAUTH, as xffl_federated_average.
 * @note Collective over the whole job; calls on one state and its groups must not overlap
 *       (collective.h, Threads).
 */
XFFL_API xffl_status_t xffl_federated_average_many(xffl_state_t *st, void *const *bufs, const size_t *counts,
                                                   size_t n, xffl_dtype_t dtype, void *stream);

/**
 * @brief Start xffl_federated_average without waiting for it: the model crosses while the caller
 *        computes (request.h).
 *
 * The request runs xffl_federated_average's schedule on a thread of its own: once done, buf holds
 * exactly the bytes the blocking call would have left, on every rank. Until then buf must not be read
 * or written, and the state takes only its getters (others get XFFL_ESTATE naming this call).
 * @param[in] st the state, with federated scaling
 * @param[in,out] buf as for xffl_federated_average; must stay valid and untouched until the request
 *                is done
 * @param[in] count as for xffl_federated_average
 * @param[in] dtype as for xffl_federated_average
 * @param[in] stream as for xffl_federated_average
 * @param[out] req the request, owned by the caller (xffl_request_wait or xffl_request_test, then
 *             xffl_request_free); written only on success
 * @return XFFL_OK (started); XFFL_EINVAL (NULL req, or an argument xffl_federated_average refuses
 *         before any message: NULL st, NULL buf with count > 0, unknown dtype, a byte size that
 *         overflows size_t, a stream with a host backend, FLAT with unequal federated group sizes);
 *         XFFL_ESTATE (no federated scaling, or another call or request on the state is in progress);
 *         XFFL_EUNSUPPORTED (what xffl_federated_average refuses before any message: e.g. facility mode
 *         with XFFL_FACILITY_FAULTS_CONTINUE and XFFL_FEDAVG_FLAT with HSDP); XFFL_ENOMEM (no thread could be
 *         started). Failures found while running (ranks that disagree, XFFL_ETIMEOUT, XFFL_EPEER,
 *         XFFL_EBACKEND, and in facility mode with XFFL_FACILITY_FAULTS_CONTINUE XFFL_EQUORUM and
 *         XFFL_EAUTH) come from xffl_request_wait or xffl_request_test.
 * @note Facility mode with XFFL_FACILITY_FAULTS_CONTINUE: the request's thread runs the rounds (a redo
 *       among the survivors, the admission and heal of a returning facility) as the blocking call does;
 *       once it is done XFFL_ATTR_FEDERATION_EPOCH, _ROUND and XFFL_ATTR_LIVE_FACILITIES are the
 *       blocking call's. While it is in flight they answer the last committed round's, or this one's
 *       once its run committed it.
 * @note Collective over the whole job, as xffl_federated_average: every rank starts it (or calls the
 *       blocking one) in the same order. One request at a time per state.
 */
XFFL_API xffl_status_t xffl_federated_average_start(xffl_state_t *st, void *buf, size_t count, xffl_dtype_t dtype,
                                                    void *stream, xffl_request_t **req);

/**
 * @brief Start xffl_federated_average_many without waiting for it (request.h).
 *
 * As xffl_federated_average_start, with the buffers of xffl_federated_average_many: the arrays bufs and
 * counts are copied (they may go once this returns); the buffers they point to must stay valid and
 * untouched until the request is done.
 * @param[in] st the state, with federated scaling
 * @param[in] bufs as for xffl_federated_average_many
 * @param[in] counts as for xffl_federated_average_many
 * @param[in] n as for xffl_federated_average_many
 * @param[in] dtype as for xffl_federated_average_many
 * @param[in] stream as for xffl_federated_average_many
 * @param[out] req the request, owned by the caller; written only on success
 * @return XFFL_OK (started); XFFL_EINVAL (NULL req, or as xffl_federated_average_many before any
 *         message: no buffer is touched); XFFL_ESTATE (no federated scaling, or another call or request
 *         on the state is in progress); XFFL_EUNSUPPORTED (as xffl_federated_average_start);
 *         XFFL_ENOMEM. Failures found while running come from
 *         xffl_request_wait or xffl_request_test, as for xffl_federated_average_start.
 * @note Collective over the whole job, as xffl_federated_average_many. One request at a time per state.
 */
XFFL_API xffl_status_t xffl_federated_average_many_start(xffl_state_t *st, void *const *bufs, const size_t *counts,
                                                         size_t n, xffl_dtype_t dtype, void *stream,
                                                         xffl_request_t **req);

/**
 * @brief Weight of each federated group in the average (FedAvg by sample count); default unweighted.
 * @param[in] st the state, with federated scaling
 * @param[in] weights G finite, non-negative values with a positive sum (G = federated world size),
 *            copied; or NULL with n == 0 to return to the plain mean
 * @param[in] n number of weights: G, or 0
 * @return XFFL_OK; XFFL_EINVAL (NULL st, NULL weights with n > 0, n neither G nor 0, a negative or
 *         non-finite weight, a sum that is not positive and finite); XFFL_ESTATE (no federated scaling,
 *         or another call on the state is in progress).
 * @note Local, but every rank must set the same weights. Weighted averages need a floating-point dtype;
 *       xffl_unset_federated_scaling clears them.
 */
XFFL_API xffl_status_t xffl_set_federated_weights(xffl_state_t *st, const double *weights, size_t n);

XFFL_END_DECLS

#endif /* XFFL_FEDERATED_H */
