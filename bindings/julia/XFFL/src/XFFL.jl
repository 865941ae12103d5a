"""
    XFFL

Julia interface to xffl, the distributed state of cross-facility federated learning (the C-ABI
counterpart of xFFL's Python `DistributedState`).

```julia
using XFFL
State() do st
    set_global!(st, XFFL.BACKEND_NONE, XFFL.DEVICE_CPU, "127.0.0.1", 29500, 1, 8)
    federated_scaling!(st, [4]; hsdp = 2)
    @show federated_rank(st) receive_from(st) ranks(group(st, XFFL.GROUP_FEDERATED))
    print(XFFL.describe(st))
end
```

Every failing call throws `XFFLError(code, message)` with the library's message.

Names that would clash with Base, the standard libraries or common packages are not exported and stay
qualified, as MPI.jl does: `XFFL.rank` (LinearAlgebra's `rank`), `XFFL.stream` (CUDA.jl),
`XFFL.describe` (DataFrames), `XFFL.mesh` (Makie), `XFFL.set_log_callback`.

Threads and tasks: drive each `State` (and its groups) from one task at a time. UCX runs
single-threaded inside a state, and the library refuses overlapping calls on one state with
`XFFL.ESTATE`; distinct states are independent.

Lifetimes: `destroy!` is explicit, and collective jobs should call it (or use the do-block forms) at
a known point on every rank. A `State` that is garbage-collected without `destroy!` is destroyed by its
finalizer (locally, never a collective), owned groups first: a state holds its owned groups, so they
are never finalized before it, and owned groups have no finalizer of their own. A borrowed group
(`group(st, kind)`) used after its layout ended (`unset_*!`) or after `destroy!(st)` throws an
`XFFLError` (`ESTATE`) instead of reaching freed memory; an owned group after its `destroy!` too.
"""
module XFFL

include("LibXFFL.jl")
using .LibXFFL
const L = LibXFFL

export XFFLError, State, Group, destroy!, from_env
export set_global!, set_node!, set_exec_device!, set_init_device!, set_fsdp!, set_hsdp!, federated_scaling!
export set_fsdp_mesh!, set_hsdp_manual!, communicating_processes, set_option_string!, get_option_string
export unset_fsdp!, unset_hsdp!, unset_federated_scaling!
export is_node_setup, is_fsdp_setup, is_hsdp_setup, is_federated_scaling_setup
export get_int, get_ints, master_addr, group, create_process_group, device_mesh
export set_option!, get_option, set_federated_weights!, federated_average!, federated_average_many!
export Request, federated_average_start, federated_average_many_start, isdone, free!
export group_size, group_rank, ranks, description, allreduce!, bcast!, allgather!, reduce_scatter!, barrier
export world_size, node_local_rank, node_local_size, node_rank, node_world_size
# Not exported (they clash with LinearAlgebra, CUDA.jl, DataFrames, Makie): XFFL.rank, XFFL.stream,
# XFFL.describe, XFFL.mesh. bindings/julia/check_package.py keeps it so.
export replica_local_rank, replica_local_size, replica_rank, replica_world_size
export federated_local_rank, federated_local_size, federated_rank, federated_world_size
export is_sender, receive_from, streams, hsdp, federation_epoch, federation_round, live_facilities

# The C constants without their XFFL_ prefix (XFFL.OK, XFFL.GROUP_FEDERATED, XFFL.F32, ...).
for name in names(LibXFFL; all = true)
    s = string(name)
    if startswith(s, "XFFL_")
        @eval const $(Symbol(s[6:end])) = L.$name
    end
end

# ---- errors -------------------------------------------------------------------------------------------

"""
    XFFLError(code, message)

A failed xffl call: `code` is the C status (`XFFL.EINVAL`, `XFFL.ESTATE`, ...), `message` the library's
thread-local message, read at once, naming the values involved.
"""
struct XFFLError <: Exception
    code::Cint
    message::String
end

"`status_name(code)`: \"XFFL_EINVAL: invalid argument\" for any integer."
status_name(code::Integer) = unsafe_string(L.xffl_status_string(Cint(code)))

Base.showerror(io::IO, e::XFFLError) = print(io, "XFFLError: ", status_name(e.code), ": ", e.message)

"""
    @check expr

Evaluate a LibXFFL call returning a status; throw `XFFLError` with the library's message unless it is `OK`.
"""
macro check(expr)
    quote
        local status = $(esc(expr))
        if status != L.XFFL_OK
            throw(XFFLError(status, unsafe_string(L.xffl_last_error_message())))
        end
        nothing
    end
end

"`version()`: the loaded library's version."
function version()
    major, minor, patch = Ref{Cint}(0), Ref{Cint}(0), Ref{Cint}(0)
    L.xffl_version(major, minor, patch)
    return VersionNumber(major[], minor[], patch[])
end

"`version_string()`: the loaded library's version as \"MAJOR.MINOR.PATCH\"."
version_string() = unsafe_string(L.xffl_version_string())

# ---- log lines ----------------------------------------------------------------------------------------

# xffl calls its log callback on whichever thread writes a line (the Julia thread inside a ccall, or one
# of the library's own threads: rank 0's store server, UCX's), holding the library's line lock. So the
# C callback neither allocates nor calls the user's function: it copies the line into a preallocated
# ring (no allocation, so it never starts a garbage collection, which would wait for a Julia thread
# that may itself be waiting for that lock) and wakes an AsyncCondition with uv_async_send, the one
# libuv call that is safe from any thread. The user's function then runs on an ordinary Julia task,
# where it may do anything (print, @info, even call XFFL). Lines that do not fit (more than
# LOG_SLOTS waiting, or longer than LOG_TEXT bytes) are counted and reported, never lost silently.
const LOG_SLOTS = 256
const LOG_TEXT = 1024
const LOG_LOCK = Threads.SpinLock()
const LOG_BYTES = zeros(UInt8, LOG_TEXT, LOG_SLOTS)   # column k: the text of slot k
const LOG_LENGTHS = zeros(Int, LOG_SLOTS)
const LOG_LEVELS = zeros(Cint, LOG_SLOTS)
const LOG_RANKS = zeros(Cint, LOG_SLOTS)
const LOG_COUNTS = zeros(Int, 3)   # lines written (ever), lines taken (ever), lines dropped (ring full)
const LOG_WAKE = Ref{Union{Nothing,Base.AsyncCondition}}(nothing)
const LOG_WAKE_HANDLE = Ref{Ptr{Cvoid}}(C_NULL)  # LOG_WAKE's libuv handle, read once on a Julia task
const LOG_HANDLER = Ref{Any}(nothing)

function log_line_from_c(level::Cint, rank::Cint, message::Ptr{UInt8}, ::Ptr{Cvoid})::Cvoid
    n = min(Int(ccall(:strlen, Csize_t, (Ptr{UInt8},), message)), LOG_TEXT)
    lock(LOG_LOCK)
    written, taken = LOG_COUNTS[1], LOG_COUNTS[2]
    if written - taken < LOG_SLOTS
        slot = written % LOG_SLOTS + 1
        GC.@preserve LOG_BYTES unsafe_copyto!(pointer(LOG_BYTES, (slot - 1) * LOG_TEXT + 1), message, n)
        LOG_LENGTHS[slot] = n
        LOG_LEVELS[slot] = level
        LOG_RANKS[slot] = rank
        LOG_COUNTS[1] = written + 1
    else
        LOG_COUNTS[3] += 1
    end
    unlock(LOG_LOCK)
    handle = LOG_WAKE_HANDLE[]
    handle == C_NULL || ccall(:uv_async_send, Cint, (Ptr{Cvoid},), handle)
    return nothing
end

# On a Julia task: takes the waiting lines out of the ring, then hands them to handler in order.
function drain_log_lines(handler)
    lines = Tuple{Int,Union{Int,Nothing},String}[]
    dropped = 0
    lock(LOG_LOCK)
    try
        while LOG_COUNTS[2] < LOG_COUNTS[1]
            slot = LOG_COUNTS[2] % LOG_SLOTS + 1
            text = String(LOG_BYTES[1:LOG_LENGTHS[slot], slot])
            push!(lines, (Int(LOG_LEVELS[slot]), LOG_RANKS[slot] < 0 ? nothing : Int(LOG_RANKS[slot]), text))
            LOG_COUNTS[2] += 1
        end
        dropped, LOG_COUNTS[3] = LOG_COUNTS[3], 0
    finally
        unlock(LOG_LOCK)
    end
    dropped > 0 && push!(lines, (Int(L.XFFL_LOG_WARN), nothing, "$dropped log lines dropped: more than " *
                                 "$LOG_SLOTS were waiting for the Julia task that delivers them"))
    for (level, rank, text) in lines
        handler(level, rank, text)
    end
end

"""
    XFFL.set_log_callback(f)        # f(level::Int, rank::Union{Int,Nothing}, text::String)
    XFFL.set_log_callback(nothing)  # back to stderr

Send every later log line of the library (every state of the process) to `f` instead of stderr:
its level (`XFFL.LOG_ERROR` .. `XFFL.LOG_DEBUG`), the rank of the state that wrote it (`nothing` while
unknown) and the text without the `[xffl rank N] LEVEL: ` prefix. Which lines exist is still chosen per
state by `XFFL.OPT_LOG_LEVEL`. Process-wide, like libgit2's `git_trace_set`.

`f` runs on a Julia task of its own, soon after the line was written (the library may write from
threads Julia does not run tasks on), in the order the lines were written; a line longer than 1024
bytes is cut there. Needs Julia 1.9 or later: the library's own threads enter the callback, and Julia
adopts foreign threads only from 1.9 on.
"""
function set_log_callback(f)
    VERSION >= v"1.9" || error("XFFL.set_log_callback needs Julia 1.9 (adoption of the library's own threads)")
    old_wake, old_handler = LOG_WAKE[], LOG_HANDLER[]
    if f === nothing
        @check L.xffl_set_log_callback(C_NULL, C_NULL)
        LOG_WAKE_HANDLE[] = C_NULL
        LOG_WAKE[] = nothing
    else
        wake = Base.AsyncCondition(_ -> drain_log_lines(f))
        LOG_WAKE[] = wake
        LOG_WAKE_HANDLE[] = wake.handle
        callback = @cfunction(log_line_from_c, Cvoid, (Cint, Cint, Ptr{UInt8}, Ptr{Cvoid}))
        @check L.xffl_set_log_callback(callback, C_NULL)
    end
    LOG_HANDLER[] = f
    # Lines queued before the switch still go to the function that was installed when they were written.
    old_handler === nothing || drain_log_lines(old_handler)
    old_wake === nothing || close(old_wake)
    return nothing
end

# ---- State --------------------------------------------------------------------------------------------

"""
    State()
    State(f::Function)      # do-block: destroyed when f returns or throws

One process's distributed state. Drive it from one task at a time (UCX runs single-threaded inside
it; overlapping calls get `XFFL.ESTATE`). Call `destroy!` at a known point (or use the do-block form):
the finalizer is only a safety net, doing the local `xffl_state_destroy` (never a collective) at an
unpredictable time, owned groups first.
"""
mutable struct State
    handle::Ptr{L.xffl_state_t}
    owned::Vector{Any}   # owned Groups, destroyed before the state (Group is defined below)
    layout_generation::Int  # + 1 at each unset_*!: borrowed groups of an older generation have ended
    layout_ended_by::String # the call that ended the last layout, for messages

    function State(handle::Ptr{L.xffl_state_t})
        st = new(handle, Any[], 0, "")
        finalizer(destroy!, st)
        return st
    end
end

function State()
    out = Ref{Ptr{L.xffl_state_t}}(C_NULL)
    @check L.xffl_state_create(out)
    return State(out[])
end

"""
    from_env()
    from_env(f::Function)

A state set up from the launcher's environment (torchrun, SLURM, Open MPI, XFFL_* variables), as
`xffl_state_from_env` does. Collective, like `set_global!`.
"""
function from_env()
    out = Ref{Ptr{L.xffl_state_t}}(C_NULL)
    @check L.xffl_state_from_env(out)
    return State(out[])
end

function with_state(f::Function, st::State)
    try
        return f(st)
    finally
        destroy!(st)
    end
end
State(f::Function) = with_state(f, State())
from_env(f::Function) = with_state(f, from_env())

# Every ccall taking the state passes through here: a destroyed state throws instead of reaching C.
function Base.unsafe_convert(::Type{Ptr{L.xffl_state_t}}, st::State)
    st.handle == C_NULL && throw(XFFLError(L.XFFL_ESTATE, "the XFFL.State was destroyed (destroy!)"))
    return st.handle
end

"""
    destroy!(st::State)

Destroy the owned groups still alive, then the state. Local, never blocks; safe to call twice.
"""
function destroy!(st::State)
    groups, st.owned = st.owned, Any[]  # destroy!(g) edits st.owned: iterate a detached list
    for g in groups
        destroy!(g)
    end
    if st.handle != C_NULL
        L.xffl_state_destroy(st.handle)
        st.handle = C_NULL
    end
    return nothing
end

Base.show(io::IO, st::State) =
    print(io, "XFFL.State(", st.handle == C_NULL ? "destroyed" : describe(st; format = :json), ")")

"`set_global!(st, backend, device_type, master_addr, master_port, rank, world_size)`: collective for UCX and NCCL."
set_global!(st::State, backend::Integer, device_type::Integer, master_addr::AbstractString, master_port::Integer,
            rank::Integer, world_size::Integer) =
    @check L.xffl_set_global(st, backend, device_type, String(master_addr), master_port, rank, world_size)

set_node!(st::State, node_local_rank::Integer, node_local_size::Integer, node_rank::Integer,
          node_world_size::Integer) =
    @check L.xffl_set_node(st, node_local_rank, node_local_size, node_rank, node_world_size)

"`set_exec_device!(st, device_index = -1; streams = 1)`"
set_exec_device!(st::State, device_index::Integer = -1; streams::Integer = 1) =
    @check L.xffl_set_exec_device(st, device_index, streams)

set_init_device!(st::State, init_device::Integer, meta_initialization::Bool) =
    @check L.xffl_set_init_device(st, init_device, meta_initialization ? 1 : 0)

set_fsdp!(st::State) = @check L.xffl_set_fsdp(st)
set_hsdp!(st::State, hsdp::Integer) = @check L.xffl_set_hsdp(st, hsdp)

"`set_fsdp_mesh!(st, ranks)`: FSDP over the caller's 1-D mesh (xFFL's set_fsdp(mesh)); kept in ascending order."
function set_fsdp_mesh!(st::State, ranks::AbstractVector{<:Integer})
    c_ranks = Cint.(collect(ranks))
    @check L.xffl_set_fsdp_mesh(st, c_ranks, length(c_ranks))
end

"`set_hsdp_manual!(st, replica_local_rank, replica_local_size, replica_rank, replica_world_size)`: xFFL's
_partial_hsdp_setup_manual, validated and completed into the layout of `set_hsdp!(st, replica_local_size)`."
function set_hsdp_manual!(st::State, replica_local_rank::Integer, replica_local_size::Integer, replica_rank::Integer,
                          replica_world_size::AbstractVector{<:Integer})
    c_sizes = Cint.(collect(replica_world_size))
    @check L.xffl_set_hsdp_manual(st, replica_local_rank, replica_local_size, replica_rank, c_sizes, length(c_sizes))
end

"`communicating_processes(st, federated_rank)`: the senders C_g of federated group g (0-based g, global ranks)."
communicating_processes(st::State, federated_rank::Integer) =
    read_ints((buf, cap, len) -> L.xffl_get_communicating_processes(st, federated_rank, buf, cap, len))

"`federated_scaling!(st, sizes; hsdp = 0)`: sizes in processes; one size expands to equal groups."
function federated_scaling!(st::State, sizes::AbstractVector{<:Integer}; hsdp::Integer = 0)
    c_sizes = Cint.(collect(sizes))
    @check L.xffl_federated_scaling(st, c_sizes, length(c_sizes), hsdp)
end

# The unset calls end the layout's groups (the set calls need no layout, so they end none).
function layout_ended!(st::State, call::String)
    st.layout_generation += 1
    st.layout_ended_by = call
    return nothing
end
unset_fsdp!(st::State) = (@check(L.xffl_unset_fsdp(st)); layout_ended!(st, "unset_fsdp!"))
unset_hsdp!(st::State) = (@check(L.xffl_unset_hsdp(st)); layout_ended!(st, "unset_hsdp!"))
unset_federated_scaling!(st::State) =
    (@check(L.xffl_unset_federated_scaling(st)); layout_ended!(st, "unset_federated_scaling!"))

is_node_setup(st::State) = L.xffl_is_node_setup(st) != 0
is_fsdp_setup(st::State) = L.xffl_is_fsdp_setup(st) != 0
is_hsdp_setup(st::State) = L.xffl_is_hsdp_setup(st) != 0
is_federated_scaling_setup(st::State) = L.xffl_is_federated_scaling_setup(st) != 0

# ---- fields -------------------------------------------------------------------------------------------

"`get_int(st, attr)`: a scalar field; throws `XFFLError` (`ENOTSET`) where Python would hold None."
function get_int(st::State, attr::Integer)
    value = Ref{Cint}(0)
    @check L.xffl_get_int(st, attr, value)
    return Int(value[])
end

# The EBUFSIZE protocol: ask the length with cap 0, then copy.
function read_ints(call::Function)
    len = Ref{Csize_t}(0)
    status = call(Ptr{Cint}(C_NULL), 0, len)
    status == L.XFFL_OK || status == L.XFFL_EBUFSIZE || @check status
    buf = Vector{Cint}(undef, len[])
    @check call(buf, length(buf), len)
    return Int.(buf[1:len[]])
end

function read_text(call::Function)
    len = Ref{Csize_t}(0)
    status = call(Ptr{UInt8}(C_NULL), 0, len)
    status == L.XFFL_OK || status == L.XFFL_EBUFSIZE || @check status
    buf = Vector{UInt8}(undef, len[] + 1)
    @check call(buf, length(buf), len)
    return String(buf[1:len[]])
end

"`get_ints(st, attr)`: a tuple field (replica_world_size, federated_local_size), or a scalar as 1 element."
get_ints(st::State, attr::Integer) = read_ints((buf, cap, len) -> L.xffl_get_ints(st, attr, buf, cap, len))

master_addr(st::State) = read_text((buf, cap, len) -> L.xffl_get_master_addr(st, buf, cap, len))

"`XFFL.describe(st; format = :text)` (not exported: DataFrames has `describe`): xFFL's `__str__` layout (`:text`) or JSON with its field names (`:json`)."
function describe(st::State; format::Symbol = :text)
    fmt = format === :json ? L.XFFL_FORMAT_JSON : format === :text ? L.XFFL_FORMAT_TEXT :
          throw(ArgumentError("format must be :text or :json, not :$format"))
    return read_text((buf, cap, len) -> L.xffl_state_describe(st, fmt, buf, cap, len))
end

# Named getters, as DistributedState's fields: `nothing` where Python would hold None.
function maybe_int(st::State, attr)
    try
        return get_int(st, attr)
    catch e
        e isa XFFLError && e.code == L.XFFL_ENOTSET && return nothing
        rethrow()
    end
end
function maybe_ints(st::State, attr)
    try
        return get_ints(st, attr)
    catch e
        e isa XFFLError && e.code == L.XFFL_ENOTSET && return nothing
        rethrow()
    end
end

for (fname, attr) in ((:rank, :XFFL_ATTR_RANK), (:world_size, :XFFL_ATTR_WORLD_SIZE),
                      (:node_local_rank, :XFFL_ATTR_NODE_LOCAL_RANK), (:node_local_size, :XFFL_ATTR_NODE_LOCAL_SIZE),
                      (:node_rank, :XFFL_ATTR_NODE_RANK), (:node_world_size, :XFFL_ATTR_NODE_WORLD_SIZE),
                      (:replica_local_rank, :XFFL_ATTR_REPLICA_LOCAL_RANK),
                      (:replica_local_size, :XFFL_ATTR_REPLICA_LOCAL_SIZE), (:replica_rank, :XFFL_ATTR_REPLICA_RANK),
                      (:federated_local_rank, :XFFL_ATTR_FEDERATED_LOCAL_RANK),
                      (:federated_rank, :XFFL_ATTR_FEDERATED_RANK),
                      (:federated_world_size, :XFFL_ATTR_FEDERATED_WORLD_SIZE),
                      (:receive_from, :XFFL_ATTR_RECEIVE_FROM), (:streams, :XFFL_ATTR_STREAMS),
                      (:hsdp, :XFFL_ATTR_HSDP), (:federation_epoch, :XFFL_ATTR_FEDERATION_EPOCH),
                      (:federation_round, :XFFL_ATTR_FEDERATION_ROUND))
    @eval $fname(st::State) = maybe_int(st, L.$attr)
end
replica_world_size(st::State) = maybe_ints(st, L.XFFL_ATTR_REPLICA_WORLD_SIZE)
federated_local_size(st::State) = maybe_ints(st, L.XFFL_ATTR_FEDERATED_LOCAL_SIZE)
"`live_facilities(st)`: the facilities of `federation_epoch(st)`, sorted (`nothing` without federated scaling)."
live_facilities(st::State) = maybe_ints(st, L.XFFL_ATTR_LIVE_FACILITIES)
function is_sender(st::State)
    v = maybe_int(st, L.XFFL_ATTR_IS_SENDER)
    return v === nothing ? nothing : v != 0
end

set_option!(st::State, option::Integer, value::Integer) = @check L.xffl_set_option(st, option, value)
function get_option(st::State, option::Integer)
    value = Ref{Cint}(0)
    @check L.xffl_get_option(st, option, value)
    return Int(value[])
end

"`set_option_string!(st, option, text)`: XFFL.OPT_AUTH_TOKEN or XFFL.OPT_JOB_ID, before set_global!."
set_option_string!(st::State, option::Integer, text::AbstractString) =
    @check L.xffl_set_option_string(st, option, text)
"`get_option_string(st, option)`: XFFL.OPT_JOB_ID (the auth token is write-only: an XFFLError)."
get_option_string(st::State, option::Integer) =
    read_text((buf, cap, len) -> L.xffl_get_option_string(st, option, buf, cap, len))

"`XFFL.stream(st, index)` (not exported: CUDA.jl has `stream`): the execution device's stream `index` (a `cudaStream_t` as `Ptr{Cvoid}`), borrowed from the state."
function stream(st::State, index::Integer)
    out = Ref{Ptr{Cvoid}}(C_NULL)
    @check L.xffl_get_stream(st, index, out)
    return out[]
end

"`set_federated_weights!(st, weights)`: FedAvg weights, one per federated group; empty returns to the plain mean."
function set_federated_weights!(st::State, weights::AbstractVector{<:Real})
    if isempty(weights)
        @check L.xffl_set_federated_weights(st, Ptr{Cdouble}(C_NULL), 0)
    else
        w = Cdouble.(collect(weights))
        @check L.xffl_set_federated_weights(st, w, length(w))
    end
end

"""
    XFFL.mesh(st, kind) -> Array{Int}     # not exported: Makie has `mesh`

`kind` is `XFFL.MESH_FSDP` (a vector) or `XFFL.MESH_HSDP` (a matrix `m[replica, shard]`, 1-based indices).
"""
function mesh(st::State, kind::Integer)
    shape = zeros(Cint, 2)
    ndim = Ref{Csize_t}(0)
    flat = read_ints((buf, cap, len) -> L.xffl_get_mesh(st, kind, shape, length(shape), ndim, buf, cap, len))
    ndim[] == 1 && return flat
    return permutedims(reshape(flat, Int(shape[2]), Int(shape[1])))  # C gives row-major
end

"`device_mesh(shape)`: the row-major rank grid 0 .. prod(shape)-1, as a flat vector (pure arithmetic)."
function device_mesh(shape::AbstractVector{<:Integer})
    c_shape = Cint.(collect(shape))
    return read_ints((buf, cap, len) -> L.xffl_create_device_mesh(c_shape, length(c_shape), buf, cap, len))
end

# ---- Group --------------------------------------------------------------------------------------------

"""
    Group

A process group. From `group(st, kind)`: borrowed, valid until its layout is unset (`unset_*!`; the
WORLD group until the state is destroyed) or the state destroyed; used afterwards it throws an
`XFFLError` (`ESTATE`). From `create_process_group(st, ranks)`: owned; `destroy!` it, or it is destroyed
with its state (never by a finalizer of its own).
"""
mutable struct Group
    handle::Ptr{L.xffl_group_t}
    state::State   # keeps the state alive while the group is reachable
    owned::Bool
    kind::Int                # the group kind of a borrowed group, -1 for an owned one
    layout_generation::Int   # the state's layout generation when borrowed; -1: not tied to a layout
end

"Why `g` can no longer be used, or `nothing` while it can (never calls C)."
function ended_reason(g::Group)
    g.handle == C_NULL && return "the group was destroyed (destroy!)"
    g.state.handle == C_NULL && return "its XFFL.State was destroyed (destroy!)"
    if g.layout_generation >= 0 && g.layout_generation != g.state.layout_generation
        return "the borrowed group (kind $(g.kind)) ended with $(g.state.layout_ended_by): a borrowed group " *
               "lives until its layout is unset or its state destroyed"
    end
    return nothing
end

# Every ccall taking the group passes through here: an ended group throws instead of reaching C, where
# its memory may be gone (a destroyed state frees its groups).
function Base.unsafe_convert(::Type{Ptr{L.xffl_group_t}}, g::Group)
    why = ended_reason(g)
    why === nothing || throw(XFFLError(L.XFFL_ESTATE, why))
    return g.handle
end

function destroy!(g::Group)
    if g.owned && g.handle != C_NULL
        L.xffl_group_destroy(g.handle)
        filter!(x -> x !== g, g.state.owned)
    end
    g.handle = C_NULL
    return nothing
end

"`group(st, kind; instance = 0)`: a borrowed group of the layout (`XFFL.GROUP_WORLD`, ..., `XFFL.GROUP_FEDERATION`)."
function group(st::State, kind::Integer; instance::Integer = 0)
    out = Ref{Ptr{L.xffl_group_t}}(C_NULL)
    @check L.xffl_get_group(st, kind, instance, out)
    # WORLD is made by set_global! and lives with the state; the others end with the layout.
    generation = kind == L.XFFL_GROUP_WORLD ? -1 : st.layout_generation
    return Group(out[], st, false, Int(kind), generation)
end

"""
    create_process_group(st, ranks; description = nothing)
    create_process_group(f, st, ranks; description = nothing)   # do-block: destroyed after f

An owned group of arbitrary global ranks, in any order: the group's rank order is the sorted one
(as torch's `new_group`). Called by the members only; one round trip to the job's store gives the
group an identity that no other live group sharing a member has.
"""
function create_process_group(st::State, members::AbstractVector{<:Integer};
                              description::Union{Nothing,AbstractString} = nothing)
    out = Ref{Ptr{L.xffl_group_t}}(C_NULL)
    c_ranks = Cint.(collect(members))
    desc = description === nothing ? C_NULL : String(description)
    @check L.xffl_create_process_group(st, c_ranks, length(c_ranks), desc, out)
    g = Group(out[], st, true, -1, -1)
    push!(st.owned, g)
    return g
end
function create_process_group(f::Function, st::State, members::AbstractVector{<:Integer}; kwargs...)
    g = create_process_group(st, members; kwargs...)
    try
        return f(g)
    finally
        destroy!(g)
    end
end

function group_size(g::Group)
    n = Ref{Cint}(0)
    @check L.xffl_group_size(g, n)
    return Int(n[])
end
Base.length(g::Group) = group_size(g)

"`group_rank(g)`: the caller's index among the members (0-based, as in C)."
function group_rank(g::Group)
    r = Ref{Cint}(0)
    @check L.xffl_group_rank(g, r)
    return Int(r[])
end

"`ranks(g)`: the members as global ranks, in group-rank order."
ranks(g::Group) = read_ints((buf, cap, len) -> L.xffl_group_ranks(g, buf, cap, len))
description(g::Group) = unsafe_string(L.xffl_group_description(g))
Base.show(io::IO, g::Group) = (why = ended_reason(g); print(io, "XFFL.Group(", why === nothing ? ranks(g) : "ended: " * why, ")"))

# ---- typed collectives --------------------------------------------------------------------------------

"Element types that cross the C API, with their `xffl_dtype_t`."
const Element = Union{Float32,Float64,Float16,Int8,UInt8,Int32,Int64}
dtype(::Type{Float32}) = L.XFFL_F32
dtype(::Type{Float64}) = L.XFFL_F64
dtype(::Type{Float16}) = L.XFFL_F16
dtype(::Type{Int8}) = L.XFFL_I8
dtype(::Type{UInt8}) = L.XFFL_U8
dtype(::Type{Int32}) = L.XFFL_I32
dtype(::Type{Int64}) = L.XFFL_I64

# Reductions as MPI.jl takes them: the functions +, *, min, max; also :sum, :avg, :min, :max, :prod and
# the C constants (XFFL.SUM, XFFL.AVG, ...). The mean has no Base function: :avg or XFFL.AVG.
const REDOPS = Dict(:sum => L.XFFL_SUM, :avg => L.XFFL_AVG, :min => L.XFFL_MIN, :max => L.XFFL_MAX,
                    :prod => L.XFFL_PROD)
redop(op::Integer) = Cint(op)
redop(::typeof(+)) = L.XFFL_SUM
redop(::typeof(*)) = L.XFFL_PROD
redop(::typeof(min)) = L.XFFL_MIN
redop(::typeof(max)) = L.XFFL_MAX
redop(op::Symbol) = get(() -> throw(ArgumentError("unknown reduction :$op; use one of $(keys(REDOPS))")), REDOPS, op)
redop(op) = throw(ArgumentError("unsupported reduction $op; use +, *, min, max, :avg (or XFFL.SUM, XFFL.AVG, ...)"))

"`allreduce!(g, send, recv, op = +)`; `allreduce!(g, buf, op = +)` in place. `op`: `+`, `*`, `min`, `max`, `:avg`."
function allreduce!(g::Group, send::DenseArray{T}, recv::DenseArray{T}, op = +) where {T<:Element}
    length(send) == length(recv) || throw(DimensionMismatch("send has $(length(send)) elements, recv $(length(recv))"))
    @check L.xffl_allreduce(g, send, recv, length(send), dtype(T), redop(op), C_NULL)
    return recv
end
function allreduce!(g::Group, buf::DenseArray{T}, op = +) where {T<:Element}
    @check L.xffl_allreduce(g, buf, buf, length(buf), dtype(T), redop(op), C_NULL)
    return buf
end

"`bcast!(g, buf, root)`: buf of the member whose global rank is `root`, on every member."
function bcast!(g::Group, buf::DenseArray{T}, root::Integer) where {T<:Element}
    @check L.xffl_broadcast(g, buf, length(buf), dtype(T), root, C_NULL)
    return buf
end

"`allgather!(g, send, recv)`: recv = every member's send, in group-rank order."
function allgather!(g::Group, send::DenseArray{T}, recv::DenseArray{T}) where {T<:Element}
    length(recv) == length(send) * group_size(g) ||
        throw(DimensionMismatch("recv needs $(length(send) * group_size(g)) elements, has $(length(recv))"))
    @check L.xffl_allgather(g, send, recv, length(send), dtype(T), C_NULL)
    return recv
end

"`reduce_scatter!(g, send, recv, op = +)`: recv = this member's block of the reduction."
function reduce_scatter!(g::Group, send::DenseArray{T}, recv::DenseArray{T}, op = +) where {T<:Element}
    length(send) == length(recv) * group_size(g) ||
        throw(DimensionMismatch("send needs $(length(recv) * group_size(g)) elements, has $(length(send))"))
    @check L.xffl_reduce_scatter(g, send, recv, length(recv), dtype(T), redop(op), C_NULL)
    return recv
end

barrier(g::Group) = @check L.xffl_barrier(g)

"`federated_average!(st, buf)`: average this rank's shard across federated groups, in place (collective)."
function federated_average!(st::State, buf::DenseArray{T}) where {T<:Element}
    @check L.xffl_federated_average(st, buf, length(buf), dtype(T), C_NULL)
    return buf
end

"`federated_average_many!(st, bufs)`: several buffers of one element type, coalesced into buckets."
function federated_average_many!(st::State, bufs::AbstractVector{<:DenseArray{T}}) where {T<:Element}
    pointers = Ptr{Cvoid}[pointer(b) for b in bufs]
    counts = Csize_t[length(b) for b in bufs]
    GC.@preserve bufs begin
        @check L.xffl_federated_average_many(st, pointers, counts, length(bufs), dtype(T), C_NULL)
    end
    return bufs
end

# ---- Request (xffl/request.h) ------------------------------------------------------------------------

"""
    Request

A federated average in flight, from `federated_average_start` or `federated_average_many_start`. It
keeps its state and its buffers alive; the buffers must not be read or written until `isdone(req)`
says true or `wait(req)` returns (then they hold the same bits as the blocking average). Meanwhile
the state answers its getters, and every other call throws `XFFL.ESTATE`. `free!(req)` ends it (a
request in flight is waited for first); the finalizer is only a safety net doing the same.
"""
mutable struct Request
    handle::Ptr{L.xffl_request_t}
    state::State      # keeps the state from being finalized before the request
    buffers::Any      # keeps the buffers rooted while the library writes them

    function Request(handle::Ptr{L.xffl_request_t}, state::State, buffers)
        req = new(handle, state, buffers)
        finalizer(free!, req)
        return req
    end
end

function Base.unsafe_convert(::Type{Ptr{L.xffl_request_t}}, req::Request)
    req.handle == C_NULL && throw(XFFLError(L.XFFL_EINVAL, "the XFFL.Request was freed (free!)"))
    return req.handle
end

"`federated_average_start(st, buf)`: start `federated_average!` without waiting (collective); returns a `Request`."
function federated_average_start(st::State, buf::DenseArray{T}) where {T<:Element}
    out = Ref{Ptr{L.xffl_request_t}}(C_NULL)
    @check L.xffl_federated_average_start(st, buf, length(buf), dtype(T), C_NULL, out)
    return Request(out[], st, buf)
end

"`federated_average_many_start(st, bufs)`: start `federated_average_many!` without waiting; returns a `Request`."
function federated_average_many_start(st::State, bufs::AbstractVector{<:DenseArray{T}}) where {T<:Element}
    pointers = Ptr{Cvoid}[pointer(b) for b in bufs]
    counts = Csize_t[length(b) for b in bufs]
    out = Ref{Ptr{L.xffl_request_t}}(C_NULL)
    GC.@preserve bufs begin  # the library copies the two arrays; the Request roots the buffers after
        @check L.xffl_federated_average_many_start(st, pointers, counts, length(bufs), dtype(T), C_NULL, out)
    end
    return Request(out[], st, bufs)
end

"`isdone(req)`: whether the request is done (never blocks); throws the average's error once done and failed."
function isdone(req::Request)
    done = Ref{Cint}(0)
    @check L.xffl_request_test(req, done)
    return done[] != 0
end

"`wait(req)`: wait (sleeping, bounded by the timeout) until the request is done; returns its buffers or throws its error."
function Base.wait(req::Request)
    @check L.xffl_request_wait(req)
    return req.buffers
end

"`free!(req)`: end the request (waiting for it if still in flight). Safe to call twice."
function free!(req::Request)
    if req.handle != C_NULL
        L.xffl_request_free(req.handle)
        req.handle = C_NULL
    end
    return nothing
end

end # module XFFL
