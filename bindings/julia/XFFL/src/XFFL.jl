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
    print(describe(st))
end
```

Every failing call throws `XFFLError(code, message)` with the library's message. States and owned
groups have finalizers that only do the local destroy (never a collective); call `destroy!` or use the
do-block forms to release them at a known point.
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
export get_int, get_ints, master_addr, describe, group, mesh, create_process_group, device_mesh
export set_option!, get_option, stream, set_federated_weights!, federated_average!, federated_average_many!
export group_size, group_rank, ranks, description, allreduce!, bcast!, allgather!, reduce_scatter!, barrier
export rank, world_size, node_local_rank, node_local_size, node_rank, node_world_size
export replica_local_rank, replica_local_size, replica_rank, replica_world_size
export federated_local_rank, federated_local_size, federated_rank, federated_world_size
export is_sender, receive_from, streams, hsdp

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

# xffl calls its log callback on whichever thread writes a line: the Julia thread inside a ccall, or
# one of the library's own threads (rank 0's store server, UCX's threads), where no Julia task runs. So
# the C callback only queues the line and wakes an AsyncCondition (uv_async_send is safe from any
# thread); the user's function runs later on an ordinary Julia task, where it may do anything (print,
# @info, even call XFFL). Julia adopts foreign threads that enter a @cfunction only from 1.9 on.
const LOG_LOCK = Threads.SpinLock()
const LOG_QUEUE = Tuple{Cint,Cint,String}[]
const LOG_WAKE = Ref{Union{Nothing,Base.AsyncCondition}}(nothing)
const LOG_HANDLER = Ref{Any}(nothing)

function log_line_from_c(level::Cint, rank::Cint, message::Cstring, ::Ptr{Cvoid})::Cvoid
    text = unsafe_string(message)
    lock(LOG_LOCK)
    try
        push!(LOG_QUEUE, (level, rank, text))
    finally
        unlock(LOG_LOCK)
    end
    wake = LOG_WAKE[]
    wake === nothing || ccall(:uv_async_send, Cint, (Ptr{Cvoid},), wake.handle)
    return nothing
end

function drain_log_lines(handler)
    lock(LOG_LOCK)
    lines = copy(LOG_QUEUE)
    empty!(LOG_QUEUE)
    unlock(LOG_LOCK)
    for (level, rank, text) in lines
        handler(Int(level), rank < 0 ? nothing : Int(rank), text)
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
threads Julia does not run tasks on), in the order the lines were written. Needs Julia 1.9 or later.
"""
function set_log_callback(f)
    VERSION >= v"1.9" || error("XFFL.set_log_callback needs Julia 1.9 (adoption of the library's own threads)")
    old_wake, old_handler = LOG_WAKE[], LOG_HANDLER[]
    if f === nothing
        @check L.xffl_set_log_callback(C_NULL, C_NULL)
        LOG_WAKE[] = nothing
    else
        LOG_WAKE[] = Base.AsyncCondition(_ -> drain_log_lines(f))
        callback = @cfunction(log_line_from_c, Cvoid, (Cint, Cint, Cstring, Ptr{Cvoid}))
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

One process's distributed state. Not thread-safe: calls on one state must not overlap. The finalizer
only does the local `xffl_state_destroy` (it never blocks on peers); owned groups still alive are
destroyed first.
"""
mutable struct State
    handle::Ptr{L.xffl_state_t}
    owned::Vector{Any}  # owned Groups, destroyed before the state (Group is defined below)

    function State(handle::Ptr{L.xffl_state_t})
        st = new(handle, Any[])
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

Base.unsafe_convert(::Type{Ptr{L.xffl_state_t}}, st::State) = st.handle

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

unset_fsdp!(st::State) = @check L.xffl_unset_fsdp(st)
unset_hsdp!(st::State) = @check L.xffl_unset_hsdp(st)
unset_federated_scaling!(st::State) = @check L.xffl_unset_federated_scaling(st)

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

"`describe(st; format = :text)`: xFFL's `__str__` layout (`:text`) or JSON with its field names (`:json`)."
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
                      (:hsdp, :XFFL_ATTR_HSDP))
    @eval $fname(st::State) = maybe_int(st, L.$attr)
end
replica_world_size(st::State) = maybe_ints(st, L.XFFL_ATTR_REPLICA_WORLD_SIZE)
federated_local_size(st::State) = maybe_ints(st, L.XFFL_ATTR_FEDERATED_LOCAL_SIZE)
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

"`stream(st, index)`: the execution device's stream `index` (a `cudaStream_t` as `Ptr{Cvoid}`), borrowed from the state."
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
    mesh(st, kind) -> Array{Int}

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

A process group. From `group(st, kind)`: borrowed, valid until the layout is unset or the state destroyed.
From `create_process_group(st, ranks)`: owned; `destroy!` it, or it is destroyed with its state.
"""
mutable struct Group
    handle::Ptr{L.xffl_group_t}
    state::State   # keeps the state alive while the group is reachable
    owned::Bool
end

Base.unsafe_convert(::Type{Ptr{L.xffl_group_t}}, g::Group) = g.handle

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
    return Group(out[], st, false)
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
    g = Group(out[], st, true)
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
Base.show(io::IO, g::Group) = print(io, "XFFL.Group(", g.handle == C_NULL ? "destroyed" : ranks(g), ")")

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

const REDOPS = Dict(:sum => L.XFFL_SUM, :avg => L.XFFL_AVG, :min => L.XFFL_MIN, :max => L.XFFL_MAX,
                    :prod => L.XFFL_PROD)
redop(op::Integer) = Cint(op)
redop(op::Symbol) = get(() -> throw(ArgumentError("unknown reduction :$op; use one of $(keys(REDOPS))")), REDOPS, op)

"`allreduce!(g, send, recv, op = :sum)`; `allreduce!(g, buf, op = :sum)` in place."
function allreduce!(g::Group, send::DenseArray{T}, recv::DenseArray{T}, op = :sum) where {T<:Element}
    length(send) == length(recv) || throw(DimensionMismatch("send has $(length(send)) elements, recv $(length(recv))"))
    @check L.xffl_allreduce(g, send, recv, length(send), dtype(T), redop(op), C_NULL)
    return recv
end
function allreduce!(g::Group, buf::DenseArray{T}, op = :sum) where {T<:Element}
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

"`reduce_scatter!(g, send, recv, op = :sum)`: recv = this member's block of the reduction."
function reduce_scatter!(g::Group, send::DenseArray{T}, recv::DenseArray{T}, op = :sum) where {T<:Element}
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

end # module XFFL
