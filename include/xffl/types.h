/**
 * @file xffl/types.h
 * @brief Enumerations and opaque handle types shared by the whole xffl C API.
 *
 * Every constant is an enum value (never a macro) so that bindgen, Julia and Fortran see it.
 * Enums are int-sized; new values may be appended in later minor releases, never renumbered.
 */
#ifndef XFFL_TYPES_H
#define XFFL_TYPES_H

#include "export.h"

XFFL_BEGIN_DECLS

/** Opaque distributed state: one per process. Owned by the caller (xffl_state_create / xffl_state_destroy). */
typedef struct xffl_state xffl_state_t;

/** Opaque process group: a member list, the caller's place in it, and (with a backend) a communicator. */
typedef struct xffl_group xffl_group_t;

/** Result of every fallible call. XFFL_OK is zero, errors are negative. */
typedef enum xffl_status XFFL_ENUM_BASE {
    XFFL_OK = 0,            /**< success */
    XFFL_EINVAL = -1,       /**< an argument is invalid (NULL, out of range, inconsistent) */
    XFFL_ESTATE = -2,       /**< the call is out of order for the state (e.g. set_hsdp before set_global) */
    XFFL_ENOTSET = -3,      /**< the requested field or group is not set (Python would hold None) */
    XFFL_ENOMEM = -4,       /**< an allocation failed */
    XFFL_EUNSUPPORTED = -5, /**< the feature is not available in this build or with this backend */
    XFFL_ETIMEOUT = -6,     /**< a bounded wait expired; the message names rank, group and what was awaited */
    XFFL_EPEER = -7,        /**< a peer failed; the message names its rank */
    XFFL_EAUTH = -8,        /**< rendezvous authentication failed */
    XFFL_ENETWORK = -9,     /**< a network operation failed */
    XFFL_EBACKEND = -10,    /**< UCX, NCCL or CUDA refused; the message carries their words */
    XFFL_EBUFSIZE = -11,    /**< an output buffer is too small; the required length is still written */
    XFFL_EINTERNAL = -12,   /**< a bug in xffl; please report the message */
    XFFL_EQUORUM = -13      /**< fewer facilities than the quorum remain in the federation: every survivor
                             *  stops (no split brain); the message names the epoch and the facilities lost */
} xffl_status_t;

/** Communication backend, chosen once in xffl_set_global. */
typedef enum xffl_backend XFFL_ENUM_BASE {
    XFFL_BACKEND_NONE = 0, /**< topology only: no communication; collectives work on one-member groups only */
    XFFL_BACKEND_UCX = 1,  /**< host memory over any network UCX reaches */
    XFFL_BACKEND_NCCL = 2, /**< CUDA memory through NCCL */
    /** host memory over plain TCP, striped and optionally encrypted (XFFL_OPT_WAN_STREAMS,
     *  XFFL_OPT_WAN_ENCRYPTION): only as XFFL_OPT_CROSS_FACILITY_BACKEND; xffl_set_global refuses it as
     *  the main backend with XFFL_EUNSUPPORTED */
    XFFL_BACKEND_WAN = 3
} xffl_backend_t;

/** Device kinds, for execution (CPU, CUDA) and for initialization (CPU, CUDA, META). */
typedef enum xffl_device XFFL_ENUM_BASE {
    XFFL_DEVICE_CPU = 0,  /**< host memory and the CPU */
    XFFL_DEVICE_CUDA = 1, /**< a CUDA device (execution needs backend NCCL) */
    XFFL_DEVICE_META = 2 /**< initialization only: parameters without storage, filled by a broadcast */
} xffl_device_t;

/** Element types of communication buffers. f16 and bf16 are reduced with f32 accumulation. */
typedef enum xffl_dtype XFFL_ENUM_BASE {
    XFFL_F32 = 0,  /**< IEEE 754 binary32 (float) */
    XFFL_F64 = 1,  /**< IEEE 754 binary64 (double) */
    XFFL_F16 = 2,  /**< IEEE 754 binary16 (half) */
    XFFL_BF16 = 3, /**< bfloat16: the upper 16 bits of a binary32 */
    XFFL_I8 = 4,   /**< int8_t */
    XFFL_U8 = 5,   /**< uint8_t */
    XFFL_I32 = 6,  /**< int32_t */
    XFFL_I64 = 7   /**< int64_t */
} xffl_dtype_t;

/** Reduction operations. AVG is a true mean (sum divided by the member count) on every backend. */
typedef enum xffl_redop XFFL_ENUM_BASE {
    XFFL_SUM = 0,  /**< sum */
    XFFL_AVG = 1,  /**< mean: the sum divided by the member count */
    XFFL_MIN = 2,  /**< minimum */
    XFFL_MAX = 3,  /**< maximum */
    XFFL_PROD = 4  /**< product */
} xffl_redop_t;

/**
 * Integer fields of the state, read with xffl_get_int (scalars) or xffl_get_ints (tuples and scalars).
 * Names follow the fields of xFFL's Python DistributedState.
 */
typedef enum xffl_attr XFFL_ENUM_BASE {
    XFFL_ATTR_BACKEND = 0,              /**< an xffl_backend_t */
    XFFL_ATTR_DEVICE_TYPE = 1,          /**< an xffl_device_t (execution device kind) */
    XFFL_ATTR_MASTER_PORT = 2,          /**< the rendezvous port given to xffl_set_global */
    XFFL_ATTR_RANK = 3,                 /**< this process's global rank, in [0, world size) */
    XFFL_ATTR_WORLD_SIZE = 4,           /**< number of processes of the job */
    XFFL_ATTR_NODE_LOCAL_RANK = 5,      /**< rank inside the node; set by xffl_set_node */
    XFFL_ATTR_NODE_LOCAL_SIZE = 6,      /**< ranks per node; set by xffl_set_node */
    XFFL_ATTR_NODE_RANK = 7,            /**< index of the node; set by xffl_set_node */
    XFFL_ATTR_NODE_WORLD_SIZE = 8,      /**< number of nodes; set by xffl_set_node */
    XFFL_ATTR_REPLICA_LOCAL_RANK = 9,   /**< shard index inside the replica (rank mod S); set with HSDP */
    XFFL_ATTR_REPLICA_LOCAL_SIZE = 10,  /**< replica size S (shards per replica); set with HSDP */
    XFFL_ATTR_REPLICA_RANK = 11,        /**< index of the replica (in its federated group, if any); set with HSDP */
    XFFL_ATTR_REPLICA_WORLD_SIZE = 12,  /**< tuple: replicas per federated group (one entry without federation) */
    XFFL_ATTR_FEDERATED_LOCAL_RANK = 13, /**< rank inside the federated group; set with federated scaling */
    XFFL_ATTR_FEDERATED_LOCAL_SIZE = 14, /**< tuple: the federated group sizes, in processes */
    XFFL_ATTR_FEDERATED_RANK = 15,       /**< index of this rank's federated group; set with federated scaling */
    XFFL_ATTR_FEDERATED_WORLD_SIZE = 16, /**< number of federated groups; set with federated scaling */
    XFFL_ATTR_IS_SENDER = 17,           /**< 0 or 1; set only with federated scaling */
    XFFL_ATTR_RECEIVE_FROM = 18,        /**< global rank of this rank's sender; set only for non-senders */
    XFFL_ATTR_STREAMS = 19,             /**< number of stream instances K of the FEDERATED and REPLICA groups */
    XFFL_ATTR_CURRENT_DEVICE = 20,      /**< device index chosen by xffl_set_exec_device */
    XFFL_ATTR_DEVICE_COUNT = 21,        /**< devices of the execution kind visible to this process */
    XFFL_ATTR_INIT_DEVICE = 22,         /**< an xffl_device_t chosen by xffl_set_init_device */
    XFFL_ATTR_META_INITIALIZATION = 23, /**< 0 or 1 */
    XFFL_ATTR_HSDP = 24,                /**< replica size S of the HSDP layout */
    /** the epoch of the last completed federated average (xffl_get_int): which set of facilities
     *  computed it. 0 while every facility of the layout takes part: single-world mode, and facility
     *  mode with XFFL_FACILITY_FAULTS_FAIL. Facility mode with XFFL_FACILITY_FAULTS_CONTINUE: the
     *  membership store's epoch of the last committed round (0 before the first average), which grows
     *  at each lost or admitted facility; the same on every rank of every facility of that round. Set
     *  with federated scaling (XFFL_ENOTSET without). Not a DistributedState field: no topology output
     *  (describe, xffl-topo) carries it. */
    XFFL_ATTR_FEDERATION_EPOCH = 25,
    /** the number of the last committed round (xffl_get_int): rounds are federated averages
     *  (xffl_federated_average, _many and their nonblocking forms), numbered from 1; 0 before the first.
     *  Counts the averages completed on this state's layout (a new layout starts again at 0). Facility
     *  mode with XFFL_FACILITY_FAULTS_CONTINUE: the federation's round, the same in every facility; a
     *  facility that was restarted learns from its first average (which gives it the current model)
     *  the round its training resumes after. Set with federated scaling (XFFL_ENOTSET without). Not a
     *  DistributedState field. */
    XFFL_ATTR_FEDERATION_ROUND = 26,
    /** tuple (xffl_get_ints): the facilities (federated group indices) whose inputs the last federated
     *  average is the mean of, sorted: every federated group of the layout, except in facility mode with
     *  XFFL_FACILITY_FAULTS_CONTINUE, where it is the contributing facilities of the last committed
     *  round (a facility admitted in that round received the model and contributes from the next one;
     *  every facility before the first average). xffl_get_int refuses it (XFFL_EINVAL). Set with
     *  federated scaling (XFFL_ENOTSET without). Not a DistributedState field. */
    XFFL_ATTR_LIVE_FACILITIES = 27
} xffl_attr_t;

/** Tunable options of a state, set with xffl_set_option and read with xffl_get_option. */
typedef enum xffl_option XFFL_ENUM_BASE {
    XFFL_OPT_TIMEOUT_MS = 0,         /**< bound of every wait, in milliseconds (default 300000, or XFFL_TIMEOUT seconds) */
    XFFL_OPT_FEDERATED_STRATEGY = 1, /**< an xffl_federated_strategy_t (default HIERARCHICAL) */
    XFFL_OPT_LOG_LEVEL = 2,          /**< an xffl_log_level_t (default WARN, or XFFL_LOG_LEVEL) */
    /** an xffl_backend_t for the groups that cross facilities (FEDERATED, and process groups whose members
     *  are in several federated groups): XFFL_BACKEND_NONE (default, or XFFL_CROSS_FACILITY_BACKEND=none)
     *  keeps them on the backend of xffl_set_global; XFFL_BACKEND_UCX (or =ucx) carries them over a UCX
     *  context of their own that sends every message eagerly (no rendezvous round trip per message over a
     *  WAN; UCX_RNDV_THRESH in the environment overrides it): under NCCL, staging device buffers through
     *  pinned host memory while every other group stays on NCCL; under UCX, beside the main UCX context,
     *  which keeps every other group; XFFL_BACKEND_WAN (or =wan) carries them over striped, optionally encrypted TCP
     *  (XFFL_OPT_WAN_STREAMS, XFFL_OPT_WAN_ENCRYPTION) when that backend is UCX or NCCL. Read by
     *  xffl_set_global: XFFL_ESTATE once it was called. */
    XFFL_OPT_CROSS_FACILITY_BACKEND = 3,
    /** string option (xffl_set_option_string): the shared secret of the rendezvous store (default
     *  XFFL_AUTH_TOKEN, else none; "" for none). Every rank of a job gives the same one. Write-only:
     *  xffl_get_option_string refuses it and no message carries it. Read by xffl_set_global: XFFL_ESTATE
     *  once it was called. */
    XFFL_OPT_AUTH_TOKEN = 4,
    /** string option (xffl_set_option_string): the job's identity, checked by the rendezvous store so that
     *  ranks of two jobs on one address never mix (default XFFL_JOB_ID, else TORCHELASTIC_RUN_ID, else
     *  SLURM_JOB_ID, else "xffl"); 1 to 256 bytes. Read by xffl_set_global: XFFL_ESTATE once it was called. */
    XFFL_OPT_JOB_ID = 5,
    /** 0 (default, or XFFL_UCX_PROCESS_SETTINGS=0) or 1 (or =1): whether the UCX backend may change the
     *  whole process for UCX 1.13's sake. UCX is loaded only when a UCX backend is made (xffl_set_global
     *  with UCX, or NCCL with the UCX crossing), and the host's SIGSEGV, SIGBUS, SIGILL, SIGFPE and SIGHUP
     *  handlers are kept unless UCX_ERROR_SIGNALS / UCX_DEBUG_SIGNO ask for UCX's, whatever this option
     *  says (xffl_set_global). With 0 nothing else that another UCX user of the process (an MPI library)
     *  would see is changed, and a peer that dies during a TCP put, or during a CMA copy on this host,
     *  aborts the survivors as UCX 1.13 decides. With 1, making the backend also sets
     *  UCX_TCP_PUT_ENABLE=n in the environment unless it is set (setenv: not safe while other threads
     *  read the environment; large messages over TCP were also faster without put here) and installs
     *  one UCX log handler for the rest of the process's life (a CMA copy from a dead peer then fails
     *  the collective with XFFL_EPEER; UCX's error and warning lines about peers already reported go to
     *  xffl's log). xffl-run exports UCX_TCP_PUT_ENABLE=n and XFFL_UCX_PROCESS_SETTINGS=1 to its
     *  children unless they are set. Read by xffl_set_global: XFFL_ESTATE once it was called. */
    XFFL_OPT_UCX_PROCESS_SETTINGS = 6,
    /** 0 (default, or XFFL_ENQUEUE_ONLY=0) or 1 (or =1), backend NCCL: with 0 every collective and
     *  federated average waits on the host for its work on the stream, bounded by the timeout, so a dead
     *  or hung peer is XFFL_EPEER / XFFL_ETIMEOUT from the call that met it. With 1 they return once
     *  enqueued, as NCCL's own calls do: ordered on the stream, and a peer's failure surfaces at a later
     *  call of the state, or in the caller's own synchronization, which NCCL may then keep waiting
     *  forever (bound it yourself). Staged (cross-facility) transfers always complete before they return.
     *  Host backends (UCX, NONE) complete before they return either way. At any time. */
    XFFL_OPT_ENQUEUE_ONLY = 7,
    /** an xffl_wire_format_t (default XFFL_WIRE_F32, or XFFL_WIRE_FORMAT=f32|bf16|f16|int8_block|int4_block):
     *  how federated averages write XFFL_F32 data on the groups that cross facilities (the WAN hop). F32
     *  is the exact all-reduce. Any other format quantises each crossing rank's (weight-scaled) copy once,
     *  all-gathers the compressed bytes over the FEDERATED group, and every crossing rank decodes the G
     *  copies and sums them in f32 in the same order, so the mean is bit-identical on every rank of every
     *  facility; the relay inside a facility stays f32, and a layout of one federated group stays exact.
     *  Under XFFL_FACILITY_FAULTS_CONTINUE the copies are those of the round's contributing facilities
     *  (exact when one is left), and the model a returning facility receives is exact f32.
     *  Other dtypes always travel exact. Every rank must set the same value (a mismatch fails the average
     *  with UCX's call-signature check, XFFL_EINVAL). The codecs run on the host: with the NCCL backend a
     *  non-F32 format needs the crossing groups on a host backend (XFFL_OPT_CROSS_FACILITY_BACKEND), whose
     *  staging copies each crossing rank's buffer to host memory and the mean back; without one, the
     *  average of XFFL_F32 data is XFFL_EUNSUPPORTED. Memory: each crossing rank keeps (G + 1) x the
     *  compressed size of the largest buffer (or bucket) averaged so far as host scratch, until the layout
     *  is unset (int8_block with G = 2: 0.76 x that buffer's bytes). At any time between averages. */
    XFFL_OPT_WIRE_FORMAT = 8,
    /** 0 (default, or XFFL_ERROR_FEEDBACK=0) or 1 (or =1), with a non-F32 XFFL_OPT_WIRE_FORMAT: the library
     *  keeps each buffer's quantisation residual (keyed by the buffer's address and count; for
     *  xffl_federated_average_many by the whole list) and adds it to that buffer's next contribution, so
     *  the error does not accumulate over rounds. Costs one f32 copy of each averaged buffer on each rank
     *  that crosses facilities; the residuals are dropped when this option is set to 0, when the wire
     *  format changes, when the layout is unset, and a buffer's residual when its count or list changes.
     *  Under XFFL_FACILITY_FAULTS_CONTINUE a round redone among the survivors starts from the residual
     *  the round started from (one more f32 copy of the call's buffers while it runs), and an average
     *  that fails, or in which this facility only receives the model, leaves the residual as it was.
     *  Every rank must set the same value. At any time between averages. */
    XFFL_OPT_ERROR_FEEDBACK = 9,
    /** with XFFL_OPT_CROSS_FACILITY_BACKEND = XFFL_BACKEND_WAN: parallel TCP connections (streams) per
     *  pair of members of a group that crosses facilities, 1 to 64 (default 4, or XFFL_WAN_STREAMS). A
     *  transfer is cut into frames handed to whichever stream is free, so one slow stream does not hold
     *  back the others and N streams get N windows on a long fat pipe. Read by xffl_set_global:
     *  XFFL_ESTATE once it was called. */
    XFFL_OPT_WAN_STREAMS = 10,
    /** with XFFL_OPT_CROSS_FACILITY_BACKEND = XFFL_BACKEND_WAN: an xffl_wan_encryption_t for the bytes
     *  that cross facilities (default NONE, or XFFL_WAN_ENCRYPTION). Any other value needs the job's
     *  secret (XFFL_OPT_AUTH_TOKEN): xffl_set_global is XFFL_EINVAL without one. A frame altered on the
     *  link fails the collective with XFFL_EAUTH naming the peer. Groups inside a facility are never
     *  encrypted. Read by xffl_set_global: XFFL_ESTATE once it was called. */
    XFFL_OPT_WAN_ENCRYPTION = 11,
    /** an xffl_facility_faults_t (default XFFL_FACILITY_FAULTS_FAIL, or
     *  XFFL_FACILITY_FAULTS=fail|continue): what a federated average does when a facility is lost. It
     *  matters only in facility mode (one job per facility: XFFL_FACILITY, XFFL_FEDERATION); in
     *  single-world mode CONTINUE is accepted and changes nothing, since one launcher's world fails as a
     *  whole. In facility mode with CONTINUE (backend ucx), job rank 0 holds the facility's lease in the
     *  federation's store (XFFL_FEDERATION_LEASE_TTL) and every rank publishes its crossing address at
     *  xffl_set_global; the averages (xffl_federated_average, _many, and their _start) go on among the
     *  live facilities (XFFL_ATTR_FEDERATION_EPOCH, _ROUND, XFFL_ATTR_LIVE_FACILITIES say what happened)
     *  and heal a returning one. The contributing facilities of a round cross in XFFL_OPT_WIRE_FORMAT
     *  (with XFFL_OPT_ERROR_FEEDBACK, a round redone among the survivors starts from the residual it
     *  started from); the model a returning facility receives is exact f32. Device memory (nccl) and
     *  FLAT with HSDP are XFFL_EUNSUPPORTED. Memory: the senders keep one copy of the caller's buffers
     *  for the duration of the call (to redo a round), and with error feedback one copy of its residual;
     *  with several buffers, every rank packs them into one buffer of their total size. Every facility
     *  must give the same value. Read by xffl_set_global: XFFL_ESTATE once it was called. */
    XFFL_OPT_FACILITY_FAULTS = 12,
    /** the facilities needed to go on under XFFL_FACILITY_FAULTS_CONTINUE, in [0, G] over the G
     *  facilities of XFFL_FEDERATED (default 0, or XFFL_FEDERATION_QUORUM): 0 means a majority of them,
     *  G / 2 + 1. Below it every survivor's federated average is XFFL_EQUORUM. A value above G is
     *  XFFL_EINVAL from xffl_set_global / xffl_federated_scaling, naming both. Read by xffl_set_global:
     *  XFFL_ESTATE once it was called. */
    XFFL_OPT_FEDERATION_QUORUM = 13
} xffl_option_t;

/** What a federated average does when a facility is lost (XFFL_OPT_FACILITY_FAULTS). */
typedef enum xffl_facility_faults XFFL_ENUM_BASE {
    /** the average fails on every rank of every facility (XFFL_EPEER / XFFL_ETIMEOUT naming the lost
     *  rank): the default */
    XFFL_FACILITY_FAULTS_FAIL = 0,
    /** the surviving facilities go on without a lost one (DESIGN.md section 7): each round's result is
     *  the (weighted) mean over the facilities of its epoch, bit-identical on every surviving rank; a
     *  facility that returns is admitted at a round boundary and receives the model, verified with a
     *  keyed hash; below the quorum every survivor gets XFFL_EQUORUM. Single-world mode: accepted, and
     *  the same as FAIL (one launcher's world fails as a whole). */
    XFFL_FACILITY_FAULTS_CONTINUE = 1
} xffl_facility_faults_t;

/** How federated averages write XFFL_F32 data between facilities (XFFL_OPT_WIRE_FORMAT). Error bounds are
 *  per contribution, before the f32 mean. */
typedef enum xffl_wire_format XFFL_ENUM_BASE {
    XFFL_WIRE_F32 = 0,        /**< exact: the f32 all-reduce (the default) */
    XFFL_WIRE_BF16 = 1,       /**< bfloat16, 2 bytes per value, |error| <= 2^-8 |x|; NaN and Inf kept */
    XFFL_WIRE_F16 = 2,        /**< IEEE binary16, 2 bytes per value, |error| <= 2^-11 |x| in [2^-14, 65504], beyond is Inf */
    XFFL_WIRE_INT8_BLOCK = 3, /**< one f32 scale per 256 values, int8 codes: |error| <= max|block| / 254; a block
                                   holding NaN or Inf decodes as NaN */
    XFFL_WIRE_INT4_BLOCK = 4  /**< one f32 scale per 64 values, 4-bit codes: |error| <= max|block| / 14; a block
                                   holding NaN or Inf decodes as NaN */
} xffl_wire_format_t;

/** Encryption of the cross-facility transport (XFFL_OPT_WAN_ENCRYPTION): an AEAD per frame, keys from
 *  the job's secret with HKDF-SHA256, one per direction and stream of each connection. */
typedef enum xffl_wan_encryption XFFL_ENUM_BASE {
    XFFL_WAN_ENCRYPTION_NONE = 0,             /**< plain TCP (connections are still authenticated) */
    XFFL_WAN_ENCRYPTION_AES_256_GCM = 1,      /**< AES-256-GCM (fast with AES-NI) */
    XFFL_WAN_ENCRYPTION_CHACHA20_POLY1305 = 2 /**< ChaCha20-Poly1305 (fast without AES instructions) */
} xffl_wan_encryption_t;

/** How xffl_federated_average moves data (DESIGN.md section 5). */
typedef enum xffl_federated_strategy XFFL_ENUM_BASE {
    XFFL_FEDAVG_HIERARCHICAL = 0, /**< senders all-reduce across groups, then broadcast to their replica group */
    XFFL_FEDAVG_FLAT = 1          /**< every rank all-reduces over its FEDERATED group (xFFL's symmetric way) */
} xffl_federated_strategy_t;

/** Verbosity of the library's own log lines on stderr. */
typedef enum xffl_log_level XFFL_ENUM_BASE {
    XFFL_LOG_ERROR = 0, /**< errors only */
    XFFL_LOG_WARN = 1,  /**< errors and warnings (the default) */
    XFFL_LOG_INFO = 2,  /**< also progress (e.g. a backend that came up and how long it took) */
    XFFL_LOG_DEBUG = 3  /**< also the details, for debugging */
} xffl_log_level_t;

/** Process-group families computed by the layout calls. */
typedef enum xffl_group_kind XFFL_ENUM_BASE {
    XFFL_GROUP_WORLD = 0,        /**< every rank; set by xffl_set_global */
    XFFL_GROUP_FSDP = 1,         /**< the ranks of the FSDP mesh */
    XFFL_GROUP_HSDP_REPLICA = 2, /**< the column of the HSDP mesh: same shard, every replica */
    XFFL_GROUP_HSDP_SHARD = 3,   /**< the row of the HSDP mesh: the shards of one replica */
    XFFL_GROUP_FEDERATED = 4,    /**< ranks that average across federated groups (K instances) */
    XFFL_GROUP_REPLICA = 5,      /**< same shard inside the federated group (K instances) */
    XFFL_GROUP_FEDERATION = 6    /**< every rank of this rank's federated group */
} xffl_group_kind_t;

/** Device meshes. */
typedef enum xffl_mesh_kind XFFL_ENUM_BASE {
    XFFL_MESH_FSDP = 0, /**< one dimension ("shard") */
    XFFL_MESH_HSDP = 1  /**< two dimensions ("replica", "shard") */
} xffl_mesh_kind_t;

/** Output formats of xffl_state_describe. */
typedef enum xffl_format XFFL_ENUM_BASE {
    XFFL_FORMAT_TEXT = 0, /**< the layout of xFFL's DistributedState.__str__ */
    XFFL_FORMAT_JSON = 1  /**< one object; keys are the DistributedState field names, null for None */
} xffl_format_t;

XFFL_END_DECLS

#endif /* XFFL_TYPES_H */
