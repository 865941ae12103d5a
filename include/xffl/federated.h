/**
 * @file xffl/federated.h
 * @brief Federated averaging: make every copy of every shard identical across federated groups.
 *
 * After a successful call every replica in every federated group holds the same bytes: the mean over
 * federated groups (weighted by xffl_set_federated_weights if set). Strategy: XFFL_OPT_FEDERATED_STRATEGY.
 * Collective over the whole job: every rank calls it with the same count and dtype.
 * Completion and the CUDA device as for the collectives (collective.h): with NCCL the work is ordered
 * on the stream and waited for on the host, bounded by the timeout, before the call returns.
 */
#ifndef XFFL_FEDERATED_H
#define XFFL_FEDERATED_H

#include <stddef.h>

#include "types.h"

XFFL_BEGIN_DECLS

/**
 * @brief Average one buffer (this rank's shard) across federated groups, in place.
 * @param[in] stream backend NCCL: buf is device memory and the work is ordered on this cudaStream_t
 *            (NULL: the pool's stream 0 of xffl_set_exec_device); other backends: NULL
 * @return XFFL_OK; XFFL_EINVAL; XFFL_ESTATE without federated scaling; communication errors.
 */
XFFL_API xffl_status_t xffl_federated_average(xffl_state_t *st, void *buf, size_t count, xffl_dtype_t dtype,
                                              void *stream);

/**
 * @brief Average several buffers, coalesced into size-balanced buckets; each buffer is updated in place.
 * @param[in] bufs n buffers; counts[i] elements each
 * @param[in] stream as for xffl_federated_average
 * @note counts[i] times the element size, and their sum, must fit in size_t: XFFL_EINVAL naming the
 *       buffer otherwise, before any buffer is touched.
 * @note Buffers under 16 MiB travel in buckets of up to 16 MiB: copied into one scratch buffer (device
 *       memory from cudaMallocAsync on the stream with NCCL), averaged, and copied back exactly; larger
 *       ones are averaged in place.
 * @return as xffl_federated_average
 */
XFFL_API xffl_status_t xffl_federated_average_many(xffl_state_t *st, void *const *bufs, const size_t *counts,
                                                   size_t n, xffl_dtype_t dtype, void *stream);

/**
 * @brief Weight of each federated group in the average (FedAvg by sample count); default unweighted.
 * @param[in] weights G finite, non-negative values with a positive sum (G = federated world size), or
 *            NULL with n == 0 to return to the plain mean
 * @return XFFL_OK; XFFL_EINVAL; XFFL_ESTATE without federated scaling.
 * @note Local, but every rank must set the same weights. Weighted averages need a floating-point dtype;
 *       unset_federated_scaling clears them.
 */
XFFL_API xffl_status_t xffl_set_federated_weights(xffl_state_t *st, const double *weights, size_t n);

XFFL_END_DECLS

#endif /* XFFL_FEDERATED_H */
