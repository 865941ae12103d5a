/**
 * @file xffl/state.h
 * @brief The distributed state: who this process is in the job, and its layout.
 *
 * A state is built by a fixed sequence of calls, as xFFL's DistributedState is:
 *   1. xffl_state_create, then the options xffl_set_global reads (the string options and
 *      XFFL_OPT_CROSS_FACILITY_BACKEND);
 *   2. xffl_set_global (required first; collective for UCX/NCCL);
 *   3. xffl_set_node, xffl_set_exec_device, xffl_set_init_device (optional, any order, before the
 *      layout; the device index and the init device may change after it);
 *   4. one layout: xffl_set_fsdp, xffl_set_fsdp_mesh, xffl_set_hsdp, xffl_set_hsdp_manual or
 *      xffl_federated_scaling (xffl_unset_* removes it so another may be chosen).
 *
 * The other options (timeout, log level, federated strategy) may be set at any time.
 * A call out of this order returns XFFL_ESTATE and changes nothing. Every invalid input returns an
 * error before anything changes; nothing ever falls back silently to another layout.
 *
 * Thread-safety: calls on one state and on its groups must not overlap. One that does returns
 * XFFL_ESTATE at once, naming the call in progress, and changes nothing (never an abort). Not checked,
 * so never to overlap anything: xffl_state_destroy and xffl_group_destroy (use after free) and
 * xffl_is_*_setup (no status to return). xffl_group_size/rank/ranks/description read what never
 * changes in a group and may run at any time while the group lives. One state's groups share one
 * UCX worker; the K instances of FEDERATED and REPLICA are for K CUDA streams (NCCL), not for
 * concurrent host threads. Distinct states are independent: one state per thread runs concurrently.
 *
 * CUDA device: xffl_set_exec_device makes the chosen device current on the calling thread, as xFFL's
 * (torch.cuda.set_device) does; every other call saves the thread's current device, works on the
 * state's, and restores the caller's before it returns (as NCCL does).
 */
#ifndef XFFL_STATE_H
#define XFFL_STATE_H

#include <stddef.h>

#include "types.h"

XFFL_BEGIN_DECLS

/**
 * @brief Create an empty state.
 * @param[out] out the new state, owned by the caller; written only on success.
 * @return XFFL_OK; XFFL_EINVAL if out is NULL, or for a malformed environment value, the message naming
 *         the variable and its value (see xffl_set_option); XFFL_ENOMEM.
 * @note Local: never communicates. Options start from the environment (see xffl_set_option).
 */
XFFL_API xffl_status_t xffl_state_create(xffl_state_t **out);

/**
 * @brief Destroy a state and every group it owns. NULL is ignored.
 *
 * Bounded time, whatever the peers do: on rank 0 the rendezvous store keeps serving the ranks still
 * connected for at most 1 s, then stops; the UCX worker flushes its endpoints for at most
 * min(timeout, 1 s), then closes them; each NCCL communicator is finalized for at most 2 s, then
 * aborted (a healthy one finishes in milliseconds). At most 2 s + 2 s per NCCL communicator in all.
 * Handles of borrowed groups end with the state; destroy owned groups (xffl_create_process_group)
 * before it. A request still in flight on the state (xffl_federated_average_start) is first waited
 * for, bounded as xffl_request_wait is (the timeout of each of its waits), since its thread drives
 * the state's backend; the request then keeps its result for xffl_request_wait/test until freed.
 * @param[in] st the state, or NULL
 * @note Local: never blocks on peers beyond the bounds above, never fails. Not checked against
 *       overlap: no other call may use the state or its groups meanwhile or after it (use after free).
 */
XFFL_API void xffl_state_destroy(xffl_state_t *st);

/**
 * @brief Create a state and set it up entirely from the launcher's environment.
 *
 * Reads torchrun (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK, GROUP_WORLD_SIZE,
 * MASTER_ADDR, MASTER_PORT), SLURM (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, SLURM_NODEID, ...),
 * Open MPI (OMPI_COMM_WORLD_*) and xffl's own variables (XFFL_BACKEND, XFFL_DEVICE, XFFL_FEDERATED,
 * XFFL_FEDERATED_LOCAL_WORLD_SIZE, XFFL_HSDP, XFFL_STREAMS, XFFL_TIMEOUT, XFFL_AUTH_TOKEN,
 * XFFL_LOG_LEVEL, XFFL_JOB_ID); explicit XFFL_* values win over torchrun, torchrun over Open MPI, Open
 * MPI over SLURM (the innermost launcher: mpirun inside a SLURM job inherits the job's variables).
 * Then calls set_global, set_node, set_exec_device (device -1: node_local_rank modulo the
 * device count), the layout (federated scaling if XFFL_FEDERATED* is set, else HSDP if XFFL_HSDP is set,
 * else FSDP) and, as xFFL's setup does, set_init_device: XFFL_DEVICE_CPU without meta initialization,
 * unless CUDA execution sees more than one device; then meta initialization on every rank, and
 * XFFL_DEVICE_META on the ranks that do not load the weights (all but rank 0 of the FSDP mesh, or of
 * each federated group; under HSDP all with replica_local_rank != 0).
 * Afterwards xffl_set_exec_device may still choose another device index with the same stream count
 * (with NCCL only before any communicator exists on the first device), and xffl_set_init_device
 * another init device.
 * Without MASTER_ADDR under Open MPI's mpirun or srun --mpi=pmix, rank 0 serves the rendezvous store
 * on MASTER_PORT (else a free port) and tells the other ranks where through PMIx (libpmix.so.2, loaded
 * only then); xffl_get_master_addr then answers "pmix".
 * @param[out] out the new state, owned by the caller; written only on success.
 * @return XFFL_OK; XFFL_EINVAL naming a missing, malformed or contradictory variable (also those that
 *         xffl_state_create reads); any status of the calls above.
 * @note Collective like xffl_set_global.
 */
XFFL_API xffl_status_t xffl_state_from_env(xffl_state_t **out);

/**
 * @brief Set the global information and bring up the backend.
 * @param[in] st the state (no set_global yet)
 * @param[in] backend XFFL_BACKEND_NONE (topology only), UCX or NCCL (WAN only as
 *            XFFL_OPT_CROSS_FACILITY_BACKEND; with it, XFFL_EINVAL when XFFL_OPT_WAN_ENCRYPTION is set
 *            without XFFL_OPT_AUTH_TOKEN)
 * @param[in] device_type XFFL_DEVICE_CPU or XFFL_DEVICE_CUDA
 * @param[in] master_addr rendezvous host, non-empty; copied
 * @param[in] master_port rendezvous port in [0, 65535]
 * @param[in] rank this process's rank in its job, in [0, world_size): the global rank, unless in facility
 *            mode (see the note)
 * @param[in] world_size number of processes of the job, >= 1
 * @return XFFL_OK; XFFL_EINVAL for a NULL or out-of-range argument, and in facility mode for only one of
 *         XFFL_FACILITY and XFFL_FEDERATION set, XFFL_FEDERATED unset, a facility index outside [0, G), a
 *         world_size other than that facility's size, XFFL_CROSS_FACILITY_BACKEND=ucx (UCX cannot reach
 *         another job), or sizes other than those the federation was started with (each message names
 *         the values); XFFL_ESTATE if already set, or while
 *         another call on the state is in progress; XFFL_EUNSUPPORTED for a backend or device this build
 *         lacks, for XFFL_BACKEND_WAN (a cross-facility backend only), or when UCX is needed and cannot be
 *         loaded (the dynamic loader's words, before the rendezvous); for UCX and NCCL also XFFL_ETIMEOUT,
 *         XFFL_EAUTH, XFFL_ENETWORK, XFFL_EPEER, XFFL_EBACKEND.
 * @note Collective for UCX and NCCL: every rank of the job calls it. With XFFL_BACKEND_NONE it is local.
 *       Sets the WORLD group.
 * @note Facility mode (one job per facility): when the environment sets XFFL_FACILITY=i and
 *       XFFL_FEDERATION (the federation's store: xffl://host:port or etcd://h1:2379,...), this job is
 *       facility i of XFFL_FEDERATED = (F_0, ..., F_{G-1}), which lists every facility's size. rank and
 *       world_size are then the job's own (world_size must be F_i) and the state holds the global rank
 *       O_i + rank (O_i = F_0 + ... + F_{i-1}): XFFL_ATTR_RANK and XFFL_ATTR_WORLD_SIZE, and every
 *       field, group member list and sender, are the global values, the same as in the single job of
 *       the whole federation. The WORLD group is this facility's job only (global ranks O_i .. O_i + F_i
 *       - 1; its xffl_group_rank is the job's rank): only the FEDERATED groups cross facilities, over the
 *       wan crossing backend, which meets the other facilities' senders through the federation's store
 *       (keys under "xffl/<XFFL_JOB_ID>/": every facility's job must share XFFL_JOB_ID). The job's rank
 *       0 checks the federation here (its sizes); other ranks reach it only when they send across
 *       facilities (senders, at their first federated average). Layouts and process groups must keep
 *       every other group inside the facility (XFFL_EUNSUPPORTED otherwise, naming the rank), and
 *       xffl_federated_scaling must be given XFFL_FEDERATED's sizes (XFFL_EINVAL naming both). A facility
 *       that fails makes the other facilities' next cross-facility collective fail (XFFL_EPEER or
 *       XFFL_ETIMEOUT), never hang; with XFFL_OPT_FACILITY_FAULTS = XFFL_FACILITY_FAULTS_CONTINUE the
 *       others go on instead: job rank 0 then also takes the facility's lease in the federation's store
 *       here (its errors as above), and every rank publishes its crossing address here.
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
 * @param[in] st the state (after set_global, no layout)
 * @param[in] node_local_rank rank inside the node, in [0, node_local_size)
 * @param[in] node_local_size ranks per node; must divide the world size
 * @param[in] node_rank index of the node, in [0, node_world_size)
 * @param[in] node_world_size number of nodes; must equal world_size / node_local_size
 * @return XFFL_OK; XFFL_EINVAL (NULL st, a value out of range, node_local_size not dividing the world
 *         size, node_world_size not world_size / node_local_size); XFFL_ESTATE before set_global, after
 *         the layout is set, or while another call on the state is in progress; XFFL_EUNSUPPORTED with
 *         NCCL when the node runs more ranks than CUDA sees devices.
 * @note Local.
 */
XFFL_API xffl_status_t xffl_set_node(xffl_state_t *st, int node_local_rank, int node_local_size, int node_rank,
                                     int node_world_size);

/**
 * @brief Choose the execution device and the number K of stream instances.
 * @param[in] st the state (after set_global)
 * @param[in] device_index device to use, or -1 to choose node_local_rank modulo the device count
 *            (0 when the node is not set). Must be -1 or 0 for CPU execution.
 * @param[in] streams K in [1, 32]: the FEDERATED and REPLICA groups get K instances, one per CUDA
 *            stream of the pool (NCCL); not for concurrent host threads (see Thread-safety above).
 * @return XFFL_OK; XFFL_EINVAL (NULL st, device_index or streams out of range); XFFL_ESTATE before
 *         set_global, or after the layout is set with a stream count other than the layout's (its
 *         groups were made with it), or with NCCL for another device once a communicator exists on the
 *         current one, or while another call on the state is in progress; XFFL_EUNSUPPORTED /
 *         XFFL_EBACKEND for CUDA without a usable device.
 * @note Local. May be called after the layout (xffl_state_from_env sets one) to choose the device
 *       index. Makes the chosen CUDA device current on the calling thread.
 */
XFFL_API xffl_status_t xffl_set_exec_device(xffl_state_t *st, int device_index, int streams);

/**
 * @brief A stream of the execution device's pool (K streams from xffl_set_exec_device).
 * @param[in] st the state
 * @param[in] index in [0, streams)
 * @param[out] stream a cudaStream_t, borrowed: it lives as long as the state; written only on success.
 * @return XFFL_OK; XFFL_EINVAL (NULL st or stream, index out of range); XFFL_ESTATE before
 *         set_global, or while another call on the state is in progress; XFFL_EUNSUPPORTED for CPU
 *         execution.
 * @note Local.
 */
XFFL_API xffl_status_t xffl_get_stream(const xffl_state_t *st, int index, void **stream);

/**
 * @brief Choose where the model is initialized.
 * @param[in] st the state (after set_global)
 * @param[in] init_device XFFL_DEVICE_CPU, XFFL_DEVICE_CUDA or XFFL_DEVICE_META
 * @param[in] meta_initialization non-zero if ranks that receive weights start on the meta device
 * @return XFFL_OK; XFFL_EINVAL (NULL st, an unknown device, XFFL_DEVICE_CUDA without CUDA execution);
 *         XFFL_ESTATE before set_global, or while another call on the state is in progress.
 * @note Local. Allowed before and after the layout.
 */
XFFL_API xffl_status_t xffl_set_init_device(xffl_state_t *st, xffl_device_t init_device, int meta_initialization);

/**
 * @brief FSDP over the whole world: fsdp_mesh = (0 .. W-1), FSDP group = WORLD.
 * @param[in] st the state (after set_global, no layout)
 * @return XFFL_OK; XFFL_EINVAL (NULL st); XFFL_ESTATE before set_global, when a layout is already
 *         set, or while another call on the state is in progress; with NCCL also XFFL_ETIMEOUT,
 *         XFFL_EPEER, XFFL_EBACKEND from making the communicators.
 * @note Local with backends NONE and UCX; collective over the world for backends that create
 *       communicators eagerly (NCCL).
 */
XFFL_API xffl_status_t xffl_set_fsdp(xffl_state_t *st);

/**
 * @brief FSDP over the caller's 1-D mesh (xFFL's set_fsdp(mesh)): the FSDP group is those ranks.
 *
 * The group and fsdp_mesh hold the ranks in ascending order, whatever order they are given in (torch's
 * new_group, which builds a mesh's group, sorts them too), so members that list one mesh in different
 * orders agree. Only the FSDP group and fsdp_mesh exist afterwards (WORLD stays); xffl_unset_fsdp
 * removes the layout. With every rank of the world, it equals xffl_set_fsdp.
 * @param[in] st the state (after set_global, no layout)
 * @param[in] ranks n distinct global ranks in [0, W), the caller among them; copied
 * @param[in] n number of ranks, >= 1
 * @return XFFL_OK; XFFL_EINVAL (NULL ranks, n == 0, a rank outside [0, W), a rank twice, or the caller
 *         not in the mesh: the message names the values; also NULL st); XFFL_ESTATE before set_global,
 *         when a layout is already set, or while another call on the state is in progress; with NCCL
 *         also XFFL_ETIMEOUT, XFFL_EPEER, XFFL_EBACKEND from the split. Nothing changes on an error.
 * @note With backends NONE and UCX it is local: a group is a member list, so only the mesh's members
 *       must agree on it. With NCCL it is collective over the whole world, as every layout call: every
 *       rank calls it with the mesh that contains it, the meshes partition the world (each rank in exactly
 *       one, all members of a mesh giving the same set), and each rank takes part in one ncclCommSplit
 *       over the world with colour = the mesh's smallest rank. Meshes that do not partition the world
 *       end in XFFL_ETIMEOUT or XFFL_EBACKEND from that split.
 */
XFFL_API xffl_status_t xffl_set_fsdp_mesh(xffl_state_t *st, const int *ranks, size_t n);

/**
 * @brief HSDP with replicas of `hsdp` ranks: hsdp_mesh = the (W/hsdp, hsdp) row-major grid.
 * @param[in] st the state (after set_global, no layout)
 * @param[in] hsdp replica size S >= 1 dividing the world size
 * @return XFFL_OK; XFFL_EINVAL (NULL st, or hsdp < 1 or not dividing W: the message names the values
 *         and a divisor that would work); XFFL_ESTATE before set_global, when a layout is already set,
 *         or while another call on the state is in progress; with NCCL also XFFL_ETIMEOUT,
 *         XFFL_EPEER, XFFL_EBACKEND from making the communicators.
 * @note Local for backends NONE and UCX; collective over the world for NCCL (every rank calls it with
 *       the same hsdp).
 */
XFFL_API xffl_status_t xffl_set_hsdp(xffl_state_t *st, int hsdp);

/**
 * @brief HSDP from its fields (xFFL's _partial_hsdp_setup_manual), validated, then completed.
 *
 * xFFL's call stores the four fields and leaves the mesh to its caller; xffl never keeps half a
 * layout: after a successful call the layout is HSDP exactly as xffl_set_hsdp(st, replica_local_size)
 * makes it (fields, hsdp_mesh = the (replica_world_size[0], replica_local_size) row-major grid, the
 * HSDP_REPLICA and HSDP_SHARD groups; WORLD stays), and xffl_unset_hsdp removes it. Since that grid
 * fixes every rank's place, the fields must be this rank's: replica_local_rank = rank mod
 * replica_local_size and replica_rank = rank / replica_local_size. xFFL also calls it inside federated
 * scaling with one replica_world_size entry per federated group; here xffl_federated_scaling(sizes, n,
 * hsdp) computes those fields, so this call takes no federated layout.
 * @param[in] st the state (after set_global, no layout)
 * @param[in] replica_local_rank in [0, replica_local_size), equal to rank mod replica_local_size
 * @param[in] replica_local_size S >= 1 dividing the world size W
 * @param[in] replica_rank in [0, replica_world_size[0]), equal to rank / replica_local_size
 * @param[in] replica_world_size one entry: W / replica_local_size replicas
 * @param[in] n number of entries of replica_world_size: 1
 * @return XFFL_OK; XFFL_EINVAL naming the first inconsistent value (NULL replica_world_size, n != 1, a
 *         value out of range, S not dividing W (with divisors that would), W / S != replica_world_size[0],
 *         the fields not this rank's place, NULL st); XFFL_ESTATE before set_global, when a layout is
 *         already set, or while another call on the state is in progress; with NCCL also XFFL_ETIMEOUT,
 *         XFFL_EPEER, XFFL_EBACKEND from making the communicators. Nothing changes on an error.
 * @note Like xffl_set_hsdp: local for NONE and UCX; collective over the world for NCCL (every rank calls
 *       it, or xffl_set_hsdp, with the same replica_local_size).
 */
XFFL_API xffl_status_t xffl_set_hsdp_manual(xffl_state_t *st, int replica_local_rank, int replica_local_size,
                                            int replica_rank, const int *replica_world_size, size_t n);

/**
 * @brief Federated scaling: the world split into federated groups of the given sizes.
 * @param[in] st the state (after set_global, no layout)
 * @param[in] sizes group sizes in processes; n_sizes == 1 expands to W / sizes[0] equal groups
 * @param[in] n_sizes number of entries of sizes, >= 1
 * @param[in] hsdp replica size inside each group, or 0 for none (then all sizes must be equal)
 * @return XFFL_OK; XFFL_EINVAL (NULL st or sizes, n_sizes == 0, sizes not summing to W, a size <= 0,
 *         hsdp < 0 or not dividing a size, unequal sizes without hsdp: the message suggests an hsdp
 *         that would work); XFFL_ESTATE before set_global, when a layout is already set, or while
 *         another call on the state is in progress; with NCCL also XFFL_ETIMEOUT,
 *         XFFL_EPEER, XFFL_EBACKEND from making the communicators.
 * @note Local for backends NONE and UCX; collective over the world for NCCL (every rank calls it with
 *       the same sizes and hsdp).
 */
XFFL_API xffl_status_t xffl_federated_scaling(xffl_state_t *st, const int *sizes, size_t n_sizes, int hsdp);

/**
 * @brief The senders C_g of federated group g (xFFL's _get_communicating_processes; DESIGN.md 3.2):
 *        the ranks of group g that carry its shards across facilities.
 *
 * With HSDP S: C_g[p] = O_g + (p mod R_g) * S + p for each shard p < S (O_g = F_0 + ... + F_{g-1},
 * R_g = F_g / S), one rank per shard spread diagonally over the replicas. Without HSDP every rank of
 * group g is a sender: O_g .. O_g + F_g - 1. For W = 12, F = (4, 8), S = 2: g = 0 gives 0, 3 and g = 1
 * gives 4, 7.
 * @param[in] st the state, with federated scaling
 * @param[in] federated_rank g in [0, federated_world_size); any group, not only the caller's
 * @param[out] ranks receives the len senders in shard order on XFFL_OK (untouched otherwise); may be
 *             NULL when cap is 0
 * @param[in] cap capacity of ranks in elements
 * @param[out] len number of senders, written on XFFL_OK and XFFL_EBUFSIZE
 * @return XFFL_OK; XFFL_EINVAL (NULL st or len, g out of range, NULL ranks with cap > 0);
 *         XFFL_ESTATE without federated scaling, or while another call on the state is in progress;
 *         XFFL_EBUFSIZE when cap < len.
 * @note Local: computed, never communicated.
 */
XFFL_API xffl_status_t xffl_get_communicating_processes(const xffl_state_t *st, int federated_rank, int *ranks,
                                                        size_t cap, size_t *len);

/**
 * @brief Remove a layout set by xffl_set_fsdp or xffl_set_fsdp_mesh.
 * @param[in] st the state
 * @return XFFL_OK; XFFL_EINVAL (NULL st); XFFL_ESTATE if FSDP is not the layout, or while another call
 *         on the state is in progress.
 * @note Local. The layout's borrowed groups end: a collective on one returns XFFL_ESTATE.
 */
XFFL_API xffl_status_t xffl_unset_fsdp(xffl_state_t *st);
/**
 * @brief Remove a layout set by xffl_set_hsdp or xffl_set_hsdp_manual.
 * @param[in] st the state
 * @return XFFL_OK; XFFL_EINVAL (NULL st); XFFL_ESTATE if HSDP is not the layout, or while another call
 *         on the state is in progress.
 * @note Local. The layout's borrowed groups end: a collective on one returns XFFL_ESTATE.
 */
XFFL_API xffl_status_t xffl_unset_hsdp(xffl_state_t *st);
/**
 * @brief Remove federated scaling, and the federated weights with it.
 * @param[in] st the state
 * @return XFFL_OK; XFFL_EINVAL (NULL st); XFFL_ESTATE if federated scaling is not the layout, or while
 *         another call on the state is in progress.
 * @note Local. The layout's borrowed groups end: a collective on one returns XFFL_ESTATE.
 */
XFFL_API xffl_status_t xffl_unset_federated_scaling(xffl_state_t *st);

/**
 * @brief Whether xffl_set_node succeeded.
 * @param[in] st the state, or NULL
 * @return 1 if set_node succeeded, 0 otherwise (also for NULL).
 * @note Local. Not checked against overlap (no status to return): never call it during another call
 *       on the state.
 */
XFFL_API int xffl_is_node_setup(const xffl_state_t *st);
/**
 * @brief Whether an FSDP mesh exists.
 * @param[in] st the state, or NULL
 * @return 1 if an FSDP mesh exists (set_fsdp, or federated scaling without HSDP), 0 otherwise (also for
 *         NULL).
 * @note Local; as xffl_is_node_setup, never during another call on the state.
 */
XFFL_API int xffl_is_fsdp_setup(const xffl_state_t *st);
/**
 * @brief Whether an HSDP mesh exists.
 * @param[in] st the state, or NULL
 * @return 1 if an HSDP mesh exists (set_hsdp, or federated scaling with HSDP), 0 otherwise (also for
 *         NULL).
 * @note Local; as xffl_is_node_setup, never during another call on the state.
 */
XFFL_API int xffl_is_hsdp_setup(const xffl_state_t *st);
/**
 * @brief Whether federated scaling is the layout.
 * @param[in] st the state, or NULL
 * @return 1 if federated scaling is set, 0 otherwise (also for NULL).
 * @note Local; as xffl_is_node_setup, never during another call on the state.
 */
XFFL_API int xffl_is_federated_scaling_setup(const xffl_state_t *st);

/**
 * @brief Read a scalar field.
 * @param[in] st the state
 * @param[in] attr the field (xffl_attr_t says what each one is)
 * @param[out] value written only on success
 * @return XFFL_OK; XFFL_EINVAL (NULL st or value, unknown attr, or a tuple attr: use xffl_get_ints);
 *         XFFL_ENOTSET where Python would hold None (the message names the field); XFFL_ESTATE
 *         while another call on the state is in progress.
 * @note Local.
 */
XFFL_API xffl_status_t xffl_get_int(const xffl_state_t *st, xffl_attr_t attr, int *value);

/**
 * @brief Read a tuple field (or a scalar as a one-element tuple).
 * @param[in] st the state
 * @param[in] attr the field (xffl_attr_t says what each one is)
 * @param[out] buf receives the len values on XFFL_OK (untouched otherwise); may be NULL when cap is 0
 * @param[in] cap capacity of buf in elements
 * @param[out] len number of elements of the field, written on XFFL_OK and XFFL_EBUFSIZE
 * @return XFFL_OK; XFFL_EINVAL (NULL st or len, unknown attr, NULL buf with cap > 0); XFFL_ENOTSET where
 *         Python would hold None; XFFL_EBUFSIZE when cap < len; XFFL_ESTATE while another call on the state
 *         is in progress.
 * @note Local.
 */
XFFL_API xffl_status_t xffl_get_ints(const xffl_state_t *st, xffl_attr_t attr, int *buf, size_t cap, size_t *len);

/**
 * @brief The master address given to xffl_set_global ("pmix" when xffl_state_from_env exchanged the
 *        store's address through PMIx).
 * @param[in] st the state
 * @param[out] buf receives the NUL-terminated string if cap > len; may be NULL when cap is 0
 * @param[in] cap capacity of buf in bytes
 * @param[out] len string length without the NUL, written on XFFL_OK and XFFL_EBUFSIZE
 * @return XFFL_OK; XFFL_EINVAL (NULL st or len, NULL buf with cap > 0); XFFL_ENOTSET before set_global;
 *         XFFL_EBUFSIZE when cap <= len; XFFL_ESTATE while another call on the state is in progress.
 * @note Local.
 */
XFFL_API xffl_status_t xffl_get_master_addr(const xffl_state_t *st, char *buf, size_t cap, size_t *len);

/**
 * @brief Set an integer option (see xffl_option_t).
 *
 * When: XFFL_OPT_TIMEOUT_MS, XFFL_OPT_LOG_LEVEL and XFFL_OPT_FEDERATED_STRATEGY at any time (a live
 * backend takes the new timeout and log level at once). XFFL_OPT_CROSS_FACILITY_BACKEND, and the string
 * options XFFL_OPT_AUTH_TOKEN and XFFL_OPT_JOB_ID (xffl_set_option_string), only before xffl_set_global,
 * which reads them: XFFL_ESTATE after it (setting the cross-facility backend to its current value is
 * still accepted).
 *
 * Defaults come from the environment, read by xffl_state_create and xffl_state_from_env: XFFL_TIMEOUT
 * (seconds, may be fractional), XFFL_LOG_LEVEL (error, warn, info, debug), XFFL_CROSS_FACILITY_BACKEND
 * (none, ucx), XFFL_AUTH_TOKEN, XFFL_JOB_ID (else TORCHELASTIC_RUN_ID, else SLURM_JOB_ID). An empty
 * variable counts as unset. A malformed value makes xffl_state_create and xffl_state_from_env return
 * XFFL_EINVAL, with a message naming the variable and its value (never the token's); no state is made.
 * @param[in] st the state
 * @param[in] option an integer option
 * @param[in] value its value
 * @return XFFL_OK; XFFL_EINVAL for a NULL state, an unknown option, a string option's key (use
 *         xffl_set_option_string) or an out-of-range value; XFFL_ESTATE as above, or while another call on
 *         the state is in progress. Nothing changes on an error.
 * @note Local.
 */
XFFL_API xffl_status_t xffl_set_option(xffl_state_t *st, xffl_option_t option, int value);

/**
 * @brief Read an integer option.
 * @param[in] st the state
 * @param[in] option an integer option
 * @param[out] value written only on success
 * @return XFFL_OK; XFFL_EINVAL (NULL st or value, unknown option, or a string option's key: use
 *         xffl_get_option_string); XFFL_ESTATE while another call on the state is in progress.
 * @note Local. Allowed at any time.
 */
XFFL_API xffl_status_t xffl_get_option(const xffl_state_t *st, xffl_option_t option, int *value);

/**
 * @brief Set a string option: XFFL_OPT_AUTH_TOKEN or XFFL_OPT_JOB_ID.
 *
 * The thread-safe way to give what the environment gives otherwise (setenv before xffl_state_create
 * races with any thread reading the environment). The value set here wins over the environment's.
 * @param[in] st the state (before xffl_set_global)
 * @param[in] option XFFL_OPT_AUTH_TOKEN (any text; "" for no authentication) or XFFL_OPT_JOB_ID (1 to
 *            256 bytes)
 * @param[in] text NUL-terminated; copied
 * @return XFFL_OK; XFFL_EINVAL (NULL st or text, unknown option, an integer option's key (use
 *         xffl_set_option), an empty or too long job id); XFFL_ESTATE after xffl_set_global, which reads
 *         them, or while another call on the state is in progress. Nothing changes on an error. No message
 *         ever contains the token.
 * @note Local. Only before xffl_set_global (and so not after xffl_state_from_env).
 */
XFFL_API xffl_status_t xffl_set_option_string(xffl_state_t *st, xffl_option_t option, const char *text);

/**
 * @brief Read a string option. The auth token is write-only: asking for it is XFFL_EINVAL, so no code
 *        path hands the shared secret back.
 * @param[in] st the state
 * @param[in] option XFFL_OPT_JOB_ID
 * @param[out] buf receives the NUL-terminated text if cap > len; may be NULL when cap is 0
 * @param[in] cap capacity of buf in bytes
 * @param[out] len text length without the NUL, written on XFFL_OK and XFFL_EBUFSIZE
 * @return XFFL_OK; XFFL_EINVAL (NULL st or len, unknown option, an integer option's key, or
 *         XFFL_OPT_AUTH_TOKEN, NULL buf with cap > 0); XFFL_EBUFSIZE when cap <= len; XFFL_ESTATE
 *         while another call on the state is in progress.
 * @note Local. Allowed at any time.
 */
XFFL_API xffl_status_t xffl_get_option_string(const xffl_state_t *st, xffl_option_t option, char *buf, size_t cap,
                                              size_t *len);

/**
 * @brief The state as text (the layout of xFFL's __str__) or JSON (DistributedState field names).
 * @param[in] st the state
 * @param[in] format XFFL_FORMAT_TEXT or XFFL_FORMAT_JSON
 * @param[out] buf receives the NUL-terminated text if cap > len; may be NULL when cap is 0
 * @param[in] cap capacity of buf in bytes
 * @param[out] len text length without the NUL, written on XFFL_OK and XFFL_EBUFSIZE
 * @return XFFL_OK; XFFL_EINVAL (NULL st or len, unknown format, NULL buf with cap > 0); XFFL_EBUFSIZE
 *         when cap <= len; XFFL_ESTATE while another call on the state is in progress.
 * @note Local. Works at every stage (unset fields print as None / null).
 */
XFFL_API xffl_status_t xffl_state_describe(const xffl_state_t *st, xffl_format_t format, char *buf, size_t cap,
                                           size_t *len);

XFFL_END_DECLS

#endif /* XFFL_STATE_H */
