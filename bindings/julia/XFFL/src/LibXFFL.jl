"""
    LibXFFL

The C API of xffl, one `@ccall` per function of `include/xffl/*.h`, named as in C, and every enum
constant as a `Cint`. Nothing here allocates, checks or throws: see the module `XFFL` for that.
`bindings/julia/check_ccalls.py` compares every `@ccall` below with clang's reading of the header.

The library is found when the module is loaded (`__init__`), first hit wins:
1. `ENV["XFFL_LIBRARY"]` (a path or a name): the override, for one run;
2. the preference `libxffl` of package XFFL, Preferences-style: in the `LocalPreferences.toml` beside
   the active project (which must list XFFL in its `[deps]`), or `[preferences.XFFL]` in that
   `Project.toml`, read through `Base.get_preferences` (what Preferences.jl reads and writes, so
   `Preferences.set_preferences!(XFFL, "libxffl" => path)` works too; no dependency on it):
   ```toml
   [XFFL]
   libxffl = "/opt/xffl/lib/libxffl.so.0"
   ```
3. `"libxffl"`, found by the dynamic loader (`LD_LIBRARY_PATH`, the system paths).
"""
module LibXFFL

using Libdl

# Not `const` on purpose: resolved in `__init__` so that the environment of the running process wins over
# the one that precompiled the package. Julia >= 1.6 accepts a global variable as the library of a ccall.
libxffl = "libxffl"

"The package's UUID (Project.toml), the key of its preferences."
const XFFL_UUID = Base.UUID("c56f7f81-f799-41b4-a34a-5b36fce696e8")

"""
    library_path() -> String

Where libxffl is: `ENV["XFFL_LIBRARY"]` when set and not empty, else the preference `libxffl`, else
`"libxffl"` (see the module's docstring).
"""
function library_path()
    override = get(ENV, "XFFL_LIBRARY", "")
    isempty(override) || return override
    preferences = isdefined(Base, :get_preferences) ? Base.get_preferences(XFFL_UUID) : Dict{String,Any}()
    preferred = get(preferences, "libxffl", nothing)
    preferred isa AbstractString && !isempty(preferred) && return String(preferred)
    return "libxffl"
end

function __init__()
    # Julia's GC stops threads through SIGSEGV (safepoints). Loading UCX (at the first UCX set_global)
    # runs libucs's constructor, which installs UCX's own SIGSEGV handler; libxffl puts the host's back
    # right after the load, but a Julia thread reaching a safepoint during it would meet UCX's handler
    # (MPI.jl issue #337). With UCX_ERROR_SIGNALS empty UCX installs no error handler at all (checked
    # by the C test ucx_loading.ucx_no_error_signals), and libxffl, seeing the variable set, leaves the
    # untouched handlers alone. MPI.jl does the same, keeping SIGILL, SIGBUS and SIGFPE for UCX; we keep
    # none. What remains: the thread that loads UCX gets UCX's alternate signal stack (valid memory;
    # Julia's handler moves on to its own signal stack to throw). A value the user set is left alone.
    haskey(ENV, "UCX_ERROR_SIGNALS") || (ENV["UCX_ERROR_SIGNALS"] = "")
    global libxffl = library_path()
    # Open it now so a wrong path fails at `using XFFL` with the loader's words, not at the first call.
    Libdl.dlopen(libxffl)
    return nothing
end

"Opaque `xffl_state_t`: only ever used behind a `Ptr`."
mutable struct xffl_state_t end
"Opaque `xffl_group_t`: only ever used behind a `Ptr`."
mutable struct xffl_group_t end
"Opaque `xffl_request_t`: only ever used behind a `Ptr`."
mutable struct xffl_request_t end

# ---- enum constants (every enum of xffl/types.h is int-sized) -----------------------------------------
# xffl_status_t
const XFFL_OK = Cint(0)
const XFFL_EINVAL = Cint(-1)
const XFFL_ESTATE = Cint(-2)
const XFFL_ENOTSET = Cint(-3)
const XFFL_ENOMEM = Cint(-4)
const XFFL_EUNSUPPORTED = Cint(-5)
const XFFL_ETIMEOUT = Cint(-6)
const XFFL_EPEER = Cint(-7)
const XFFL_EAUTH = Cint(-8)
const XFFL_ENETWORK = Cint(-9)
const XFFL_EBACKEND = Cint(-10)
const XFFL_EBUFSIZE = Cint(-11)
const XFFL_EINTERNAL = Cint(-12)
const XFFL_EQUORUM = Cint(-13)
# xffl_backend_t
const XFFL_BACKEND_NONE = Cint(0)
const XFFL_BACKEND_UCX = Cint(1)
const XFFL_BACKEND_NCCL = Cint(2)
const XFFL_BACKEND_WAN = Cint(3)
# xffl_device_t
const XFFL_DEVICE_CPU = Cint(0)
const XFFL_DEVICE_CUDA = Cint(1)
const XFFL_DEVICE_META = Cint(2)
# xffl_dtype_t
const XFFL_F32 = Cint(0)
const XFFL_F64 = Cint(1)
const XFFL_F16 = Cint(2)
const XFFL_BF16 = Cint(3)
const XFFL_I8 = Cint(4)
const XFFL_U8 = Cint(5)
const XFFL_I32 = Cint(6)
const XFFL_I64 = Cint(7)
# xffl_redop_t
const XFFL_SUM = Cint(0)
const XFFL_AVG = Cint(1)
const XFFL_MIN = Cint(2)
const XFFL_MAX = Cint(3)
const XFFL_PROD = Cint(4)
# xffl_attr_t
const XFFL_ATTR_BACKEND = Cint(0)
const XFFL_ATTR_DEVICE_TYPE = Cint(1)
const XFFL_ATTR_MASTER_PORT = Cint(2)
const XFFL_ATTR_RANK = Cint(3)
const XFFL_ATTR_WORLD_SIZE = Cint(4)
const XFFL_ATTR_NODE_LOCAL_RANK = Cint(5)
const XFFL_ATTR_NODE_LOCAL_SIZE = Cint(6)
const XFFL_ATTR_NODE_RANK = Cint(7)
const XFFL_ATTR_NODE_WORLD_SIZE = Cint(8)
const XFFL_ATTR_REPLICA_LOCAL_RANK = Cint(9)
const XFFL_ATTR_REPLICA_LOCAL_SIZE = Cint(10)
const XFFL_ATTR_REPLICA_RANK = Cint(11)
const XFFL_ATTR_REPLICA_WORLD_SIZE = Cint(12)
const XFFL_ATTR_FEDERATED_LOCAL_RANK = Cint(13)
const XFFL_ATTR_FEDERATED_LOCAL_SIZE = Cint(14)
const XFFL_ATTR_FEDERATED_RANK = Cint(15)
const XFFL_ATTR_FEDERATED_WORLD_SIZE = Cint(16)
const XFFL_ATTR_IS_SENDER = Cint(17)
const XFFL_ATTR_RECEIVE_FROM = Cint(18)
const XFFL_ATTR_STREAMS = Cint(19)
const XFFL_ATTR_CURRENT_DEVICE = Cint(20)
const XFFL_ATTR_DEVICE_COUNT = Cint(21)
const XFFL_ATTR_INIT_DEVICE = Cint(22)
const XFFL_ATTR_META_INITIALIZATION = Cint(23)
const XFFL_ATTR_HSDP = Cint(24)
const XFFL_ATTR_FEDERATION_EPOCH = Cint(25)
const XFFL_ATTR_FEDERATION_ROUND = Cint(26)
const XFFL_ATTR_LIVE_FACILITIES = Cint(27)
# xffl_option_t
const XFFL_OPT_TIMEOUT_MS = Cint(0)
const XFFL_OPT_FEDERATED_STRATEGY = Cint(1)
const XFFL_OPT_LOG_LEVEL = Cint(2)
const XFFL_OPT_CROSS_FACILITY_BACKEND = Cint(3)
const XFFL_OPT_AUTH_TOKEN = Cint(4)
const XFFL_OPT_JOB_ID = Cint(5)
const XFFL_OPT_UCX_PROCESS_SETTINGS = Cint(6)
const XFFL_OPT_ENQUEUE_ONLY = Cint(7)
const XFFL_OPT_WIRE_FORMAT = Cint(8)
const XFFL_OPT_ERROR_FEEDBACK = Cint(9)
# xffl_wire_format_t
const XFFL_WIRE_F32 = Cint(0)
const XFFL_WIRE_BF16 = Cint(1)
const XFFL_WIRE_F16 = Cint(2)
const XFFL_WIRE_INT8_BLOCK = Cint(3)
const XFFL_WIRE_INT4_BLOCK = Cint(4)
const XFFL_OPT_WAN_STREAMS = Cint(10)
const XFFL_OPT_WAN_ENCRYPTION = Cint(11)
# xffl_wan_encryption_t
const XFFL_WAN_ENCRYPTION_NONE = Cint(0)
const XFFL_WAN_ENCRYPTION_AES_256_GCM = Cint(1)
const XFFL_WAN_ENCRYPTION_CHACHA20_POLY1305 = Cint(2)
const XFFL_OPT_FACILITY_FAULTS = Cint(12)
const XFFL_OPT_FEDERATION_QUORUM = Cint(13)
# xffl_facility_faults_t
const XFFL_FACILITY_FAULTS_FAIL = Cint(0)
const XFFL_FACILITY_FAULTS_CONTINUE = Cint(1)
# xffl_federated_strategy_t
const XFFL_FEDAVG_HIERARCHICAL = Cint(0)
const XFFL_FEDAVG_FLAT = Cint(1)
# xffl_log_level_t
const XFFL_LOG_ERROR = Cint(0)
const XFFL_LOG_WARN = Cint(1)
const XFFL_LOG_INFO = Cint(2)
const XFFL_LOG_DEBUG = Cint(3)
# xffl_group_kind_t
const XFFL_GROUP_WORLD = Cint(0)
const XFFL_GROUP_FSDP = Cint(1)
const XFFL_GROUP_HSDP_REPLICA = Cint(2)
const XFFL_GROUP_HSDP_SHARD = Cint(3)
const XFFL_GROUP_FEDERATED = Cint(4)
const XFFL_GROUP_REPLICA = Cint(5)
const XFFL_GROUP_FEDERATION = Cint(6)
# xffl_mesh_kind_t
const XFFL_MESH_FSDP = Cint(0)
const XFFL_MESH_HSDP = Cint(1)
# xffl_format_t
const XFFL_FORMAT_TEXT = Cint(0)
const XFFL_FORMAT_JSON = Cint(1)

# ---- xffl/status.h -------------------------------------------------------------------------------------
xffl_status_string(status) =
    @ccall libxffl.xffl_status_string(status::Cint)::Cstring
xffl_last_error_message() =
    @ccall libxffl.xffl_last_error_message()::Cstring

# ---- xffl/version.h ------------------------------------------------------------------------------------
xffl_version(major, minor, patch) =
    @ccall libxffl.xffl_version(major::Ptr{Cint}, minor::Ptr{Cint}, patch::Ptr{Cint})::Cvoid
xffl_version_string() =
    @ccall libxffl.xffl_version_string()::Cstring

# ---- xffl/state.h --------------------------------------------------------------------------------------
xffl_state_create(out) =
    @ccall libxffl.xffl_state_create(out::Ptr{Ptr{xffl_state_t}})::Cint
xffl_state_from_env(out) =
    @ccall libxffl.xffl_state_from_env(out::Ptr{Ptr{xffl_state_t}})::Cint
xffl_state_destroy(st) =
    @ccall libxffl.xffl_state_destroy(st::Ptr{xffl_state_t})::Cvoid
xffl_set_global(st, backend, device_type, master_addr, master_port, rank, world_size) =
    @ccall libxffl.xffl_set_global(st::Ptr{xffl_state_t}, backend::Cint, device_type::Cint, master_addr::Cstring,
                                   master_port::Cint, rank::Cint, world_size::Cint)::Cint
xffl_set_node(st, node_local_rank, node_local_size, node_rank, node_world_size) =
    @ccall libxffl.xffl_set_node(st::Ptr{xffl_state_t}, node_local_rank::Cint, node_local_size::Cint,
                                 node_rank::Cint, node_world_size::Cint)::Cint
xffl_set_exec_device(st, device_index, streams) =
    @ccall libxffl.xffl_set_exec_device(st::Ptr{xffl_state_t}, device_index::Cint, streams::Cint)::Cint
xffl_set_init_device(st, init_device, meta_initialization) =
    @ccall libxffl.xffl_set_init_device(st::Ptr{xffl_state_t}, init_device::Cint, meta_initialization::Cint)::Cint
xffl_set_fsdp(st) =
    @ccall libxffl.xffl_set_fsdp(st::Ptr{xffl_state_t})::Cint
xffl_set_fsdp_mesh(st, ranks, n) =
    @ccall libxffl.xffl_set_fsdp_mesh(st::Ptr{xffl_state_t}, ranks::Ptr{Cint}, n::Csize_t)::Cint
xffl_set_hsdp(st, hsdp) =
    @ccall libxffl.xffl_set_hsdp(st::Ptr{xffl_state_t}, hsdp::Cint)::Cint
xffl_set_hsdp_manual(st, replica_local_rank, replica_local_size, replica_rank, replica_world_size, n) =
    @ccall libxffl.xffl_set_hsdp_manual(st::Ptr{xffl_state_t}, replica_local_rank::Cint, replica_local_size::Cint,
                                        replica_rank::Cint, replica_world_size::Ptr{Cint}, n::Csize_t)::Cint
xffl_get_communicating_processes(st, federated_rank, ranks, cap, len) =
    @ccall libxffl.xffl_get_communicating_processes(st::Ptr{xffl_state_t}, federated_rank::Cint, ranks::Ptr{Cint},
                                                    cap::Csize_t, len::Ptr{Csize_t})::Cint
xffl_federated_scaling(st, sizes, n_sizes, hsdp) =
    @ccall libxffl.xffl_federated_scaling(st::Ptr{xffl_state_t}, sizes::Ptr{Cint}, n_sizes::Csize_t, hsdp::Cint)::Cint
xffl_unset_fsdp(st) =
    @ccall libxffl.xffl_unset_fsdp(st::Ptr{xffl_state_t})::Cint
xffl_unset_hsdp(st) =
    @ccall libxffl.xffl_unset_hsdp(st::Ptr{xffl_state_t})::Cint
xffl_unset_federated_scaling(st) =
    @ccall libxffl.xffl_unset_federated_scaling(st::Ptr{xffl_state_t})::Cint
xffl_is_node_setup(st) =
    @ccall libxffl.xffl_is_node_setup(st::Ptr{xffl_state_t})::Cint
xffl_is_fsdp_setup(st) =
    @ccall libxffl.xffl_is_fsdp_setup(st::Ptr{xffl_state_t})::Cint
xffl_is_hsdp_setup(st) =
    @ccall libxffl.xffl_is_hsdp_setup(st::Ptr{xffl_state_t})::Cint
xffl_is_federated_scaling_setup(st) =
    @ccall libxffl.xffl_is_federated_scaling_setup(st::Ptr{xffl_state_t})::Cint
xffl_get_int(st, attr, value) =
    @ccall libxffl.xffl_get_int(st::Ptr{xffl_state_t}, attr::Cint, value::Ptr{Cint})::Cint
xffl_get_ints(st, attr, buf, cap, len) =
    @ccall libxffl.xffl_get_ints(st::Ptr{xffl_state_t}, attr::Cint, buf::Ptr{Cint}, cap::Csize_t,
                                 len::Ptr{Csize_t})::Cint
xffl_get_master_addr(st, buf, cap, len) =
    @ccall libxffl.xffl_get_master_addr(st::Ptr{xffl_state_t}, buf::Ptr{UInt8}, cap::Csize_t,
                                        len::Ptr{Csize_t})::Cint
xffl_set_option(st, option, value) =
    @ccall libxffl.xffl_set_option(st::Ptr{xffl_state_t}, option::Cint, value::Cint)::Cint
xffl_get_option(st, option, value) =
    @ccall libxffl.xffl_get_option(st::Ptr{xffl_state_t}, option::Cint, value::Ptr{Cint})::Cint
xffl_set_option_string(st, option, text) =
    @ccall libxffl.xffl_set_option_string(st::Ptr{xffl_state_t}, option::Cint, text::Cstring)::Cint
xffl_get_option_string(st, option, buf, cap, len) =
    @ccall libxffl.xffl_get_option_string(st::Ptr{xffl_state_t}, option::Cint, buf::Ptr{UInt8}, cap::Csize_t,
                                          len::Ptr{Csize_t})::Cint
xffl_get_stream(st, index, stream) =
    @ccall libxffl.xffl_get_stream(st::Ptr{xffl_state_t}, index::Cint, stream::Ptr{Ptr{Cvoid}})::Cint
xffl_state_describe(st, format, buf, cap, len) =
    @ccall libxffl.xffl_state_describe(st::Ptr{xffl_state_t}, format::Cint, buf::Ptr{UInt8}, cap::Csize_t,
                                       len::Ptr{Csize_t})::Cint

# ---- xffl/group.h --------------------------------------------------------------------------------------
xffl_get_group(st, kind, instance, out) =
    @ccall libxffl.xffl_get_group(st::Ptr{xffl_state_t}, kind::Cint, instance::Cint,
                                  out::Ptr{Ptr{xffl_group_t}})::Cint
xffl_create_process_group(st, ranks, n, description, out) =
    @ccall libxffl.xffl_create_process_group(st::Ptr{xffl_state_t}, ranks::Ptr{Cint}, n::Csize_t,
                                             description::Cstring, out::Ptr{Ptr{xffl_group_t}})::Cint
xffl_group_destroy(group) =
    @ccall libxffl.xffl_group_destroy(group::Ptr{xffl_group_t})::Cvoid
xffl_group_size(group, size) =
    @ccall libxffl.xffl_group_size(group::Ptr{xffl_group_t}, size::Ptr{Cint})::Cint
xffl_group_rank(group, rank) =
    @ccall libxffl.xffl_group_rank(group::Ptr{xffl_group_t}, rank::Ptr{Cint})::Cint
xffl_group_ranks(group, buf, cap, len) =
    @ccall libxffl.xffl_group_ranks(group::Ptr{xffl_group_t}, buf::Ptr{Cint}, cap::Csize_t, len::Ptr{Csize_t})::Cint
xffl_group_description(group) =
    @ccall libxffl.xffl_group_description(group::Ptr{xffl_group_t})::Cstring

# ---- xffl/mesh.h ---------------------------------------------------------------------------------------
xffl_get_mesh(st, kind, shape, shape_cap, ndim, ranks, cap, len) =
    @ccall libxffl.xffl_get_mesh(st::Ptr{xffl_state_t}, kind::Cint, shape::Ptr{Cint}, shape_cap::Csize_t,
                                 ndim::Ptr{Csize_t}, ranks::Ptr{Cint}, cap::Csize_t, len::Ptr{Csize_t})::Cint
xffl_create_device_mesh(shape, ndim, ranks, cap, len) =
    @ccall libxffl.xffl_create_device_mesh(shape::Ptr{Cint}, ndim::Csize_t, ranks::Ptr{Cint}, cap::Csize_t,
                                           len::Ptr{Csize_t})::Cint

# ---- xffl/collective.h ---------------------------------------------------------------------------------
xffl_allreduce(group, send, recv, count, dtype, op, stream) =
    @ccall libxffl.xffl_allreduce(group::Ptr{xffl_group_t}, send::Ptr{Cvoid}, recv::Ptr{Cvoid}, count::Csize_t,
                                  dtype::Cint, op::Cint, stream::Ptr{Cvoid})::Cint
xffl_broadcast(group, buf, count, dtype, root, stream) =
    @ccall libxffl.xffl_broadcast(group::Ptr{xffl_group_t}, buf::Ptr{Cvoid}, count::Csize_t, dtype::Cint,
                                  root::Cint, stream::Ptr{Cvoid})::Cint
xffl_allgather(group, send, recv, send_count, dtype, stream) =
    @ccall libxffl.xffl_allgather(group::Ptr{xffl_group_t}, send::Ptr{Cvoid}, recv::Ptr{Cvoid},
                                  send_count::Csize_t, dtype::Cint, stream::Ptr{Cvoid})::Cint
xffl_reduce_scatter(group, send, recv, recv_count, dtype, op, stream) =
    @ccall libxffl.xffl_reduce_scatter(group::Ptr{xffl_group_t}, send::Ptr{Cvoid}, recv::Ptr{Cvoid},
                                       recv_count::Csize_t, dtype::Cint, op::Cint, stream::Ptr{Cvoid})::Cint
xffl_barrier(group) =
    @ccall libxffl.xffl_barrier(group::Ptr{xffl_group_t})::Cint

# ---- xffl/log.h ---------------------------------------------------------------------------------------
# callback: a `@cfunction(f, Cvoid, (Cint, Cint, Cstring, Ptr{Cvoid}))` pointer, or C_NULL for stderr.
xffl_set_log_callback(callback, user_data) =
    @ccall libxffl.xffl_set_log_callback(callback::Ptr{Cvoid}, user_data::Ptr{Cvoid})::Cint

# ---- xffl/federated.h ----------------------------------------------------------------------------------
xffl_federated_average(st, buf, count, dtype, stream) =
    @ccall libxffl.xffl_federated_average(st::Ptr{xffl_state_t}, buf::Ptr{Cvoid}, count::Csize_t, dtype::Cint,
                                          stream::Ptr{Cvoid})::Cint
xffl_federated_average_many(st, bufs, counts, n, dtype, stream) =
    @ccall libxffl.xffl_federated_average_many(st::Ptr{xffl_state_t}, bufs::Ptr{Ptr{Cvoid}}, counts::Ptr{Csize_t},
                                               n::Csize_t, dtype::Cint, stream::Ptr{Cvoid})::Cint
xffl_set_federated_weights(st, weights, n) =
    @ccall libxffl.xffl_set_federated_weights(st::Ptr{xffl_state_t}, weights::Ptr{Cdouble}, n::Csize_t)::Cint
xffl_federated_average_start(st, buf, count, dtype, stream, req) =
    @ccall libxffl.xffl_federated_average_start(st::Ptr{xffl_state_t}, buf::Ptr{Cvoid}, count::Csize_t, dtype::Cint,
                                                stream::Ptr{Cvoid}, req::Ptr{Ptr{xffl_request_t}})::Cint
xffl_federated_average_many_start(st, bufs, counts, n, dtype, stream, req) =
    @ccall libxffl.xffl_federated_average_many_start(st::Ptr{xffl_state_t}, bufs::Ptr{Ptr{Cvoid}},
                                                     counts::Ptr{Csize_t}, n::Csize_t, dtype::Cint,
                                                     stream::Ptr{Cvoid}, req::Ptr{Ptr{xffl_request_t}})::Cint

# ---- xffl/request.h ------------------------------------------------------------------------------------
xffl_request_test(req, done) =
    @ccall libxffl.xffl_request_test(req::Ptr{xffl_request_t}, done::Ptr{Cint})::Cint
xffl_request_wait(req) =
    @ccall libxffl.xffl_request_wait(req::Ptr{xffl_request_t})::Cint
xffl_request_free(req) =
    @ccall libxffl.xffl_request_free(req::Ptr{xffl_request_t})::Cvoid

end # module LibXFFL
