/**
 * @file xffl/collective.h
 * @brief Collectives on a group, in the vocabulary of NCCL (dtype, redop, stream last).
 *
 * Collective: every member calls the same collectives on the same group in the same order, with the
 * same count, dtype, op and root. Every wait is bounded by the state's timeout (XFFL_ETIMEOUT names
 * the rank, the group and what was awaited). Reductions are deterministic: every member ends with
 * bit-identical results. In place: allreduce takes the same pointer as send and recv; allgather and
 * reduce_scatter take NCCL's layout (allgather: send == recv + group_rank * send_count elements;
 * reduce_scatter: recv == send + group_rank * recv_count elements), and any other overlap of send and
 * recv works too (the input is copied first). Partially overlapping allreduce buffers are refused.
 * `stream` is a cudaStream_t for NCCL and must be NULL for host memory.
 * With XFFL_BACKEND_NONE only one-member groups work (the operation is then local).
 */
#ifndef XFFL_COLLECTIVE_H
#define XFFL_COLLECTIVE_H

#include <stddef.h>

#include "types.h"

XFFL_BEGIN_DECLS

/**
 * @brief recv[i] = op over members of send[i], on every member.
 * @return XFFL_OK; XFFL_EINVAL; XFFL_EUNSUPPORTED; XFFL_ETIMEOUT; XFFL_EPEER; XFFL_EBACKEND.
 */
XFFL_API xffl_status_t xffl_allreduce(xffl_group_t *group, const void *send, void *recv, size_t count,
                                      xffl_dtype_t dtype, xffl_redop_t op, void *stream);

/**
 * @brief Copy buf of the member whose global rank is `root` to every member.
 * @param[in] root a global rank that is a member of the group
 */
XFFL_API xffl_status_t xffl_broadcast(xffl_group_t *group, void *buf, size_t count, xffl_dtype_t dtype, int root,
                                      void *stream);

/**
 * @brief recv = the send buffers of all members, concatenated in group-rank order.
 * @param[in] send_count elements per member; recv holds send_count * size elements
 */
XFFL_API xffl_status_t xffl_allgather(xffl_group_t *group, const void *send, void *recv, size_t send_count,
                                      xffl_dtype_t dtype, void *stream);

/**
 * @brief recv = block (group rank) of the reduction of all send buffers.
 * @param[in] recv_count elements per member; send holds recv_count * size elements
 */
XFFL_API xffl_status_t xffl_reduce_scatter(xffl_group_t *group, const void *send, void *recv, size_t recv_count,
                                           xffl_dtype_t dtype, xffl_redop_t op, void *stream);

/** @brief Returns once every member has entered the barrier (bounded by the timeout). */
XFFL_API xffl_status_t xffl_barrier(xffl_group_t *group);

XFFL_END_DECLS

#endif /* XFFL_COLLECTIVE_H */
