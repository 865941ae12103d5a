/**
 * @file xffl/state.h
 * @brief The distributed state: who this process is in the job, and its layout.
 *
 * A state is built by a fixed sequence of calls, as xFFL's DistributedState is:
 *   1. xffl_state_create
 *   2. xffl_set_global                         (required first; collective for UCX/NCCL)
 *   3. xffl_set_node, xffl_set_exec_device,    (optional, any order, before the layout;
 *      xffl_set_init_device, xffl_set_option    set_option at any time)
 *   4. one layout: xffl_set_fsdp, xffl_set_hsdp or xffl_federated_scaling
 *      (xffl_unset_* removes it so another may be chosen)
 * A call out of this order returns XFFL_ESTATE and changes nothing. Every invalid input returns an
 * error before anything changes; nothing ever falls back silently to another layout.
 *
 * Thread-safety: a state is not thread-safe; calls on one state must not overlap. Distinct states
 * are independent.
 */
#ifndef XFFL_STATE_H
#define XFFL_STATE_H

#include <stddef.h>

#include "types.h"

XFFL_BEGIN_DECLS

/**
 * @brief Create an empty state.
 * @param[out] out the new state, owned by the caller; written only on success.
 * @return XFFL_OK; XFFL_EINVAL if out is NULL; XFFL_ENOMEM.
 * @note Local: never communicates. Options start from the environment (XFFL_TIMEOUT, XFFL_LOG_LEVEL).
 */
XFFL_API xffl_status_t xffl_state_create(xffl_state_t **out);

/**
 * @brief Destroy a state and every group it owns. NULL is ignored.
 * @note Local: never blocks on peers, never fails.
 */
XFFL_API void xffl_state_destroy(xffl_state_t *st);

/**
 * @brief Create a state and set it up entirely from the launcher's environment.
 *
 * Reads torchrun (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK, GROUP_WORLD_SIZE,
 * MASTER_ADDR, MASTER_PORT), SLURM (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, SLURM_NODEID, ...),
 * Open MPI (OMPI_COMM_WORLD_*) and xffl's own variables (XFFL_BACKEND, XFFL_DEVICE, XFFL_FEDERATED,
 * XFFL_FEDERATED_LOCAL_WORLD_SIZE, XFFL_HSDP, XFFL_STREAMS, XFFL_TIMEOUT, XFFL_AUTH_TOKEN,
 * XFFL_LOG_LEVEL, XFFL_JOB_ID); explicit XFFL_* values win over torchrun, torchrun over SLURM, SLURM
 * over Open MPI. Then calls set_global, set_node, set_exec_device and the layout (federated scaling if
 * XFFL_FEDERATED* is set, else HSDP if XFFL_HSDP is set, else FSDP).
 * @param[out] out the new state, owned by the caller; written only on success.
 * @return XFFL_OK; XFFL_EINVAL naming a missing or contradictory variable; any status of the calls above.
 * @note Collective like xffl_set_global.
 */
XFFL_API xffl_status_t xffl_state_from_env(xffl_state_t **out);

/**
 * @brief Set the global information and bring up the backend.
 * @param[in] st the state (no set_global yet)
 * @param[in] backend XFFL_BACKEND_NONE (topology only), UCX or NCCL
 * @param[in] device_type XFFL_DEVICE_CPU or XFFL_DEVICE_CUDA
 * @param[in] master_addr rendezvous host, non-empty; copied
 * @param[in] master_port rendezvous port in [0, 65535]
 * @param[in] rank this process's global rank, in [0, world_size)
 * @param[in] world_size number of processes, >= 1
 * @return XFFL_OK; XFFL_EINVAL for a NULL or out-of-range argument; XFFL_ESTATE if already set;
 *         XFFL_EUNSUPPORTED for a backend or device this build lacks, or when UCX is needed and cannot
 *         be loaded (the dynamic loader's words, before the rendezvous); for UCX and NCCL also
 *         XFFL_ETIMEOUT, XFFL_EAUTH, XFFL_ENETWORK, XFFL_EPEER, XFFL_EBACKEND.
 * @note Collective for UCX and NCCL: every rank of the job calls it. With XFFL_BACKEND_NONE it is local.
 *       Sets the WORLD group.
 * @note UCX is loaded into the process here, the first time a UCX backend is made (backend UCX, or NCCL
 *       with XFFL_OPT_CROSS_FACILITY_BACKEND = XFFL_BACKEND_UCX), and stays loaded until the process
 *       ends. libxffl does not link UCX: with backend NONE, or NCCL alone, UCX never enters the process.
 *       Loading UCX (1.13) installs its own handlers for SIGSEGV, SIGBUS, SIGILL and SIGFPE, with an
 *       alternate signal stack on the calling thread, and for SIGHUP. xffl puts the host's handlers and
 *       stack back right after the load, unless UCX_ERROR_SIGNALS is set in the environment (UCX's error
 *       handlers and stack stay) or UCX_DEBUG_SIGNO is (UCX's SIGHUP handler stays). Not thread-safe
 *       against another thread that changes those handlers during the first UCX set_global, and a fault
 *       on another thread during the load meets UCX's handler. Nothing else that the whole process sees
 *       (the environment, UCX's log handlers) is changed unless XFFL_OPT_UCX_PROCESS_SETTINGS is 1.
 */
XFFL_API xffl_status_t xffl_set_global(xffl_state_t *st, xffl_backend_t backend, xffl_device_t device_type,
                                       const char *master_addr, int master_port, int rank, int world_size);

/**
 * @brief Set the node information (homogeneous nodes, as in xFFL).
 * @param[in] node_local_rank rank inside the node, in [0, node_local_size)
 * @param[in] node_local_size ranks per node; must divide the world size
 * @param[in] node_rank index of the node, in [0, node_world_size)
 * @param[in] node_world_size number of nodes; must equal world_size / node_local_size
 * @return XFFL_OK; XFFL_EINVAL; XFFL_ESTATE before set_global or after the layout is set. Local.
 */
XFFL_API xffl_status_t xffl_set_node(xffl_state_t *st, int node_local_rank, int node_local_size, int node_rank,
                                     int node_world_size);

/**
 * @brief Choose the execution device and the number K of stream instances.
 * @param[in] device_index device to use, or -1 to choose node_local_rank modulo the device count
 *            (0 when the node is not set). Must be -1 or 0 for CPU execution.
 * @param[in] streams K in [1, 32]: the FEDERATED and REPLICA groups get K instances for concurrent use.
 * @return XFFL_OK; XFFL_EINVAL; XFFL_ESTATE before set_global or after the layout is set;
 *         XFFL_EUNSUPPORTED / XFFL_EBACKEND for CUDA without a usable device. Local.
 */
XFFL_API xffl_status_t xffl_set_exec_device(xffl_state_t *st, int device_index, int streams);

/**
 * @brief A stream of the execution device's pool (K streams from xffl_set_exec_device).
 * @param[in] index in [0, streams)
 * @param[out] stream a cudaStream_t, borrowed: it lives as long as the state; written only on success.
 * @return XFFL_OK; XFFL_EINVAL (NULL, index out of range); XFFL_ESTATE before set_global;
 *         XFFL_EUNSUPPORTED for CPU execution. Local.
 */
XFFL_API xffl_status_t xffl_get_stream(const xffl_state_t *st, int index, void **stream);

/**
 * @brief Choose where the model is initialized.
 * @param[in] init_device XFFL_DEVICE_CPU, XFFL_DEVICE_CUDA or XFFL_DEVICE_META
 * @param[in] meta_initialization non-zero if ranks that receive weights start on the meta device
 * @return XFFL_OK; XFFL_EINVAL; XFFL_ESTATE before set_global. Local.
 */
XFFL_API xffl_status_t xffl_set_init_device(xffl_state_t *st, xffl_device_t init_device, int meta_initialization);

/**
 * @brief FSDP over the whole world: fsdp_mesh = (0 .. W-1), FSDP group = WORLD.
 * @return XFFL_OK; XFFL_ESTATE before set_global or when a layout is already set.
 * @note Collective over the world for backends that create communicators eagerly (NCCL).
 */
XFFL_API xffl_status_t xffl_set_fsdp(xffl_state_t *st);

/**
 * @brief HSDP with replicas of `hsdp` ranks: hsdp_mesh = the (W/hsdp, hsdp) row-major grid.
 * @param[in] hsdp replica size S >= 1 dividing the world size
 * @return XFFL_OK; XFFL_EINVAL (message names the values and a divisor that would work);
 *         XFFL_ESTATE before set_global or when a layout is already set.
 */
XFFL_API xffl_status_t xffl_set_hsdp(xffl_state_t *st, int hsdp);

/**
 * @brief Federated scaling: the world split into federated groups of the given sizes.
 * @param[in] sizes group sizes in processes; n_sizes == 1 expands to W / sizes[0] equal groups
 * @param[in] n_sizes number of entries of sizes, >= 1
 * @param[in] hsdp replica size inside each group, or 0 for none (then all sizes must be equal)
 * @return XFFL_OK; XFFL_EINVAL (sizes not summing to W, a size <= 0, hsdp not dividing a size,
 *         unequal sizes without hsdp: the message suggests an hsdp that would work);
 *         XFFL_ESTATE before set_global or when a layout is already set.
 */
XFFL_API xffl_status_t xffl_federated_scaling(xffl_state_t *st, const int *sizes, size_t n_sizes, int hsdp);

/** @brief Remove a layout set by xffl_set_fsdp. @return XFFL_OK; XFFL_ESTATE if FSDP is not the layout. */
XFFL_API xffl_status_t xffl_unset_fsdp(xffl_state_t *st);
/** @brief Remove a layout set by xffl_set_hsdp. @return XFFL_OK; XFFL_ESTATE if HSDP is not the layout. */
XFFL_API xffl_status_t xffl_unset_hsdp(xffl_state_t *st);
/** @brief Remove federated scaling. @return XFFL_OK; XFFL_ESTATE if federated scaling is not the layout. */
XFFL_API xffl_status_t xffl_unset_federated_scaling(xffl_state_t *st);

/** @brief 1 if set_node succeeded, 0 otherwise (also for NULL). */
XFFL_API int xffl_is_node_setup(const xffl_state_t *st);
/** @brief 1 if an FSDP mesh exists (set_fsdp, or federated scaling without HSDP), 0 otherwise. */
XFFL_API int xffl_is_fsdp_setup(const xffl_state_t *st);
/** @brief 1 if an HSDP mesh exists (set_hsdp, or federated scaling with HSDP), 0 otherwise. */
XFFL_API int xffl_is_hsdp_setup(const xffl_state_t *st);
/** @brief 1 if federated scaling is set, 0 otherwise. */
XFFL_API int xffl_is_federated_scaling_setup(const xffl_state_t *st);

/**
 * @brief Read a scalar field.
 * @param[out] value written only on success
 * @return XFFL_OK; XFFL_EINVAL (NULL, unknown attr, or a tuple attr: use xffl_get_ints);
 *         XFFL_ENOTSET where Python would hold None.
 */
XFFL_API xffl_status_t xffl_get_int(const xffl_state_t *st, xffl_attr_t attr, int *value);

/**
 * @brief Read a tuple field (or a scalar as a one-element tuple).
 * @param[out] buf receives the len values on XFFL_OK (untouched otherwise); may be NULL when cap is 0
 * @param[in] cap capacity of buf in elements
 * @param[out] len number of elements of the field, written on XFFL_OK and XFFL_EBUFSIZE
 * @return XFFL_OK; XFFL_EINVAL; XFFL_ENOTSET; XFFL_EBUFSIZE when cap < len.
 */
XFFL_API xffl_status_t xffl_get_ints(const xffl_state_t *st, xffl_attr_t attr, int *buf, size_t cap, size_t *len);

/**
 * @brief The master address given to xffl_set_global.
 * @param[out] buf receives the NUL-terminated string if cap > len
 * @param[out] len string length without the NUL, written on XFFL_OK and XFFL_EBUFSIZE
 * @return XFFL_OK; XFFL_EINVAL; XFFL_ENOTSET before set_global; XFFL_EBUFSIZE when cap <= len.
 */
XFFL_API xffl_status_t xffl_get_master_addr(const xffl_state_t *st, char *buf, size_t cap, size_t *len);

/**
 * @brief Set an option (see xffl_option_t). Allowed at any time.
 * @return XFFL_OK; XFFL_EINVAL for a NULL state, unknown option or out-of-range value.
 */
XFFL_API xffl_status_t xffl_set_option(xffl_state_t *st, xffl_option_t option, int value);

/** @brief Read an option. @return XFFL_OK; XFFL_EINVAL. */
XFFL_API xffl_status_t xffl_get_option(const xffl_state_t *st, xffl_option_t option, int *value);

/**
 * @brief The state as text (the layout of xFFL's __str__) or JSON (DistributedState field names).
 * @param[out] buf receives the NUL-terminated text if cap > len; may be NULL when cap is 0
 * @param[out] len text length without the NUL, written on XFFL_OK and XFFL_EBUFSIZE
 * @return XFFL_OK; XFFL_EINVAL; XFFL_EBUFSIZE when cap <= len.
 * @note Local. Works at every stage (unset fields print as None / null).
 */
XFFL_API xffl_status_t xffl_state_describe(const xffl_state_t *st, xffl_format_t format, char *buf, size_t cap,
                                           size_t *len);

XFFL_END_DECLS

#endif /* XFFL_STATE_H */
