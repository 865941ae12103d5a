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
 *
 * Completion: with UCX (host memory) a collective returns once its result is in recv. With NCCL it
 * is enqueued on `stream` (NULL: the pool stream of the group's instance) and, before it returns,
 * waited for on the host, bounded by the timeout: a peer that died or hangs gives XFFL_EPEER or
 * XFFL_ETIMEOUT from the call that met it (after ncclCommAbort), never a hang in the caller's own
 * cudaStreamSynchronize. The host's wait yields the core for the first millisecond (as
 * cudaStreamSynchronize spins) and then sleeps in pauses of a sixteenth of the time waited, at most 1 ms.
 * XFFL_OPT_ENQUEUE_ONLY = 1 gives NCCL's own behaviour instead: the call returns
 * once enqueued, and a peer's failure surfaces later. Waiting is the default because without a
 * watchdog thread that aborts communicators past the timeout (torch's design, planned), an
 * enqueue-only collective whose peer died would hang the caller's next synchronization forever. Work
 * the caller enqueued on the same stream before the call is ordered before it, as in NCCL.
 * CUDA device: each call saves the calling thread's current device, makes the state's device
 * (xffl_set_exec_device) current for its own work, and restores the caller's before it returns, as
 * NCCL does; the caller's thread keeps its current device.
 *
 * Members that disagree: with UCX, members that call a collective with a different count, dtype, op
 * or root (or another collective) all get XFFL_EINVAL, within the timeout, with a message that names
 * a member and both values ("rank 2 called with count 99, rank 0 with count 100 (allreduce on world
 * group)"). The check costs no message: each message's UCX tag carries an 8-bit hash of the call's
 * arguments, checked with the message's length by its receiver, and the member that finds a
 * difference tells the others. A member whose part completed before the difference was found (the
 * root of a broadcast, which only sends) gets the XFFL_EINVAL from its next call on the group. After
 * it the group is unusable: every later call on it returns the same error. Other groups of the state
 * keep working (the members are healthy: no endpoint is closed; a send its receiver gave up stays
 * unmatched, and closing the state waits for it at most 1 s). Two calls that differ only where the 8-bit hashes collide (1 in 256) and whose messages
 * have equal lengths are not told apart; a count of 0 sends nothing, so 0 against a non-zero count
 * ends in XFFL_ETIMEOUT. A mismatch is a bug of the caller: fix it, do not recover from it.
 * With NCCL nothing is checked: NCCL itself does not, and a mismatch is undefined there (typically a
 * hang; possibly wrong results). Where xffl waits for the call on the host its wait is bounded, so
 * the hang ends in XFFL_ETIMEOUT and the communicator is aborted.
 *
 * Threads: calls on one state and on its groups must not overlap; one that does returns XFFL_ESTATE
 * at once, naming the call in progress, and changes nothing (never an abort). All groups of a state
 * share its one UCX worker, so two groups of one state cannot be driven from two threads at once
 * either, not even two instances of FEDERATED or REPLICA: those K instances exist for K CUDA streams
 * (NCCL), not for concurrent host threads. Distinct states are independent: threads that need
 * concurrent communication use one state each.
 */
#ifndef XFFL_COLLECTIVE_H
#define XFFL_COLLECTIVE_H

#include <stddef.h>

#include "types.h"

XFFL_BEGIN_DECLS

/**
 * @brief recv[i] = op over the members of send[i], on every member.
 * @param[in] group the group; every member calls with the same count, dtype and op
 * @param[in] send count elements of dtype; may equal recv (in place), must not overlap it otherwise;
 *            may be NULL when count is 0
 * @param[out] recv count elements of dtype, the reduction; may be NULL when count is 0
 * @param[in] count number of elements
 * @param[in] dtype element type of send and recv
 * @param[in] op the reduction (XFFL_AVG: sum divided by the member count)
 * @param[in] stream backend NCCL: a cudaStream_t (NULL: the pool stream of the group's instance);
 *            other backends: NULL
 * @return XFFL_OK; XFFL_EINVAL (NULL group, NULL send or recv with count > 0, unknown dtype or op, a
 *         stream with a host backend, a byte size that overflows size_t, partially overlapping
 *         buffers, or members that disagree on count, dtype or op); XFFL_ESTATE (another call on the
 *         state is in progress, the group's layout was unset, or the group is unusable after a
 *         disagreement); XFFL_EUNSUPPORTED (a group of more than one member with XFFL_BACKEND_NONE, or
 *         what the backend cannot do); XFFL_ETIMEOUT; XFFL_EPEER; XFFL_EBACKEND.
 * @note Collective over the group; calls on one state and its groups must not overlap (see the
 *       file's notes).
 */
XFFL_API xffl_status_t xffl_allreduce(xffl_group_t *group, const void *send, void *recv, size_t count,
                                      xffl_dtype_t dtype, xffl_redop_t op, void *stream);

/**
 * @brief Copy buf of the member whose global rank is `root` to every member.
 * @param[in] group the group; every member calls with the same count, dtype and root
 * @param[in,out] buf count elements of dtype: read on the root, written on the others; may be NULL
 *                when count is 0
 * @param[in] count number of elements
 * @param[in] dtype element type of buf
 * @param[in] root a global rank that is a member of the group
 * @param[in] stream backend NCCL: a cudaStream_t (NULL: the pool stream of the group's instance);
 *            other backends: NULL
 * @return XFFL_OK; XFFL_EINVAL (NULL group, NULL buf with count > 0, unknown dtype, a stream with a
 *         host backend, root not a member, or members that disagree on count, dtype or root; the root
 *         may learn of it from its next call on the group); XFFL_ESTATE (another call on the state is
 *         in progress, the group's layout was unset, or the group is unusable after a disagreement);
 *         XFFL_EUNSUPPORTED; XFFL_ETIMEOUT; XFFL_EPEER; XFFL_EBACKEND.
 * @note Collective over the group; calls on one state and its groups must not overlap (see the
 *       file's notes).
 */
XFFL_API xffl_status_t xffl_broadcast(xffl_group_t *group, void *buf, size_t count, xffl_dtype_t dtype, int root,
                                      void *stream);

/**
 * @brief recv = the send buffers of all members, concatenated in group-rank order.
 * @param[in] group the group; every member calls with the same send_count and dtype
 * @param[in] send send_count elements of dtype; may be NULL when send_count is 0
 * @param[out] recv send_count * size elements of dtype (size: the member count); in place when
 *             send == recv + group_rank * send_count
 * @param[in] send_count elements per member
 * @param[in] dtype element type of send and recv
 * @param[in] stream backend NCCL: a cudaStream_t (NULL: the pool stream of the group's instance);
 *            other backends: NULL
 * @return XFFL_OK; XFFL_EINVAL (NULL group, NULL send or recv with send_count > 0, unknown dtype, a
 *         stream with a host backend, a byte size that overflows size_t, or members that disagree on
 *         send_count or dtype);
 *         XFFL_ESTATE (another call on the state is in progress, the group's layout was unset, or the
 *         group is unusable after a disagreement); XFFL_EUNSUPPORTED; XFFL_ETIMEOUT; XFFL_EPEER;
 *         XFFL_EBACKEND.
 * @note Collective over the group; calls on one state and its groups must not overlap (see the
 *       file's notes).
 */
XFFL_API xffl_status_t xffl_allgather(xffl_group_t *group, const void *send, void *recv, size_t send_count,
                                      xffl_dtype_t dtype, void *stream);

/**
 * @brief recv = block (group rank) of the reduction of all send buffers.
 * @param[in] group the group; every member calls with the same recv_count, dtype and op
 * @param[in] send recv_count * size elements of dtype (size: the member count); may be NULL when
 *            recv_count is 0
 * @param[out] recv recv_count elements of dtype; in place when recv == send + group_rank * recv_count
 * @param[in] recv_count elements per member
 * @param[in] dtype element type of send and recv
 * @param[in] op the reduction (XFFL_AVG: sum divided by the member count)
 * @param[in] stream backend NCCL: a cudaStream_t (NULL: the pool stream of the group's instance);
 *            other backends: NULL
 * @return XFFL_OK; XFFL_EINVAL (NULL group, NULL send or recv with recv_count > 0, unknown dtype or
 *         op, a stream with a host backend, a byte size that overflows size_t, or members that disagree
 *         on recv_count, dtype or op);
 *         XFFL_ESTATE (another call on the state is in progress, the group's layout was unset, or the
 *         group is unusable after a disagreement); XFFL_EUNSUPPORTED; XFFL_ETIMEOUT; XFFL_EPEER;
 *         XFFL_EBACKEND.
 * @note Collective over the group; calls on one state and its groups must not overlap (see the
 *       file's notes).
 */
XFFL_API xffl_status_t xffl_reduce_scatter(xffl_group_t *group, const void *send, void *recv, size_t recv_count,
                                           xffl_dtype_t dtype, xffl_redop_t op, void *stream);

/**
 * @brief Returns once every member has entered the barrier (bounded by the timeout).
 * @param[in] group the group
 * @return XFFL_OK; XFFL_EINVAL (group NULL, or a member called another collective); XFFL_ESTATE
 *         (another call on the state is in progress, the group's layout was unset, or the group is
 *         unusable after a disagreement); XFFL_EUNSUPPORTED; XFFL_ETIMEOUT; XFFL_EPEER; XFFL_EBACKEND.
 * @note Collective over the group; calls on one state and its groups must not overlap (see the
 *       file's notes).
 */
XFFL_API xffl_status_t xffl_barrier(xffl_group_t *group);

XFFL_END_DECLS

#endif /* XFFL_COLLECTIVE_H */
