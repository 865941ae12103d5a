# Runs wherever a Julia exists, offline, with no Pkg.instantiate and no Manifest.toml:
#     XFFL_LIBRARY=/path/to/libxffl.so julia --startup-file=no bindings/julia/XFFL/test/runtests.jl
# XFFL is found through the load path (bindings/julia is a package directory holding XFFL/), and its
# only dependencies, Libdl and Test, are standard libraries. The worked tables of
# shared/spec/xffl-examples.md with backend none, the error paths, the 1-rank collectives, ended groups,
# reductions as functions and the log callback, through the idiomatic layer.
pushfirst!(LOAD_PATH, normpath(joinpath(@__DIR__, "..", "..")))
using Test
using XFFL

# Rank r of a job, topology only.
function plan(r, world; sizes, hsdp = 0, node_size = 0)
    st = State()
    set_global!(st, XFFL.BACKEND_NONE, XFFL.DEVICE_CPU, "127.0.0.1", 29500, r, world)
    node_size > 0 && set_node!(st, r % node_size, node_size, r ÷ node_size, world ÷ node_size)
    federated_scaling!(st, sizes; hsdp = hsdp)
    return st
end

members(st, kind) = ranks(group(st, kind))

@testset "XFFL" begin
    @testset "5.2 W=8 federated 4 hsdp 2" begin
        fl = [0, 1, 2, 3, 0, 1, 2, 3]; rl = [0, 1, 0, 1, 0, 1, 0, 1]; rr = [0, 0, 1, 1, 0, 0, 1, 1]
        sender = [true, false, false, true, true, false, false, true]
        recv = [nothing, 3, 0, nothing, nothing, 7, 4, nothing]
        rg = [[0, 2], [1, 3], [0, 2], [1, 3], [4, 6], [5, 7], [4, 6], [5, 7]]
        for r in 0:7
            State() do st
                set_global!(st, XFFL.BACKEND_NONE, XFFL.DEVICE_CPU, "127.0.0.1", 29500, r, 8)
                federated_scaling!(st, [4]; hsdp = 2)
                @test federated_local_rank(st) == fl[r+1]
                @test federated_rank(st) == r ÷ 4
                @test federated_local_size(st) == [4, 4]
                @test federated_world_size(st) == 2
                @test replica_local_rank(st) == rl[r+1]
                @test replica_rank(st) == rr[r+1]
                @test replica_world_size(st) == [2, 2]
                @test is_sender(st) == sender[r+1]
                @test receive_from(st) == recv[r+1]
                @test members(st, XFFL.GROUP_FEDERATED) == [r % 4, r % 4 + 4]
                @test members(st, XFFL.GROUP_REPLICA) == rg[r+1]
                @test members(st, XFFL.GROUP_HSDP_SHARD) == [2 * (r ÷ 2), 2 * (r ÷ 2) + 1]
                @test members(st, XFFL.GROUP_FEDERATION) == collect(4 * (r ÷ 4) .+ (0:3))
                @test XFFL.mesh(st, XFFL.MESH_HSDP) == [4*(r÷4) 4*(r÷4)+1; 4*(r÷4)+2 4*(r÷4)+3]
                @test_throws XFFLError XFFL.mesh(st, XFFL.MESH_FSDP)
            end
        end
    end

    @testset "5.4 W=12 federated (4,8) hsdp 2" begin
        recv = [nothing, 3, 0, nothing, nothing, 7, 4, nothing, 4, 7, 4, 7]
        fg = [[0, 4], [1], [2], [3, 7], [0, 4], [5], [6], [3, 7], [8], [9], [10], [11]]
        for r in 0:11
            st = plan(r, 12; sizes = [4, 8], hsdp = 2)
            @test replica_world_size(st) == [2, 4]
            @test receive_from(st) == recv[r+1]
            @test members(st, XFFL.GROUP_FEDERATED) == fg[r+1]
            @test members(st, XFFL.GROUP_REPLICA) ==
                  (r < 4 ? [r % 2, r % 2 + 2] : [4, 6, 8, 10] .+ r % 2)
            @test members(st, XFFL.GROUP_FEDERATION) == (r < 4 ? collect(0:3) : collect(4:11))
            destroy!(st)
        end
    end

    @testset "5.6 W=16 4 per node federated 8 hsdp 4" begin
        recv = [nothing, 5, nothing, 7, 0, nothing, 2, nothing, nothing, 13, nothing, 15, 8, nothing, 10, nothing]
        for r in 0:15
            st = plan(r, 16; sizes = [8], hsdp = 4, node_size = 4)
            @test node_local_rank(st) == r % 4
            @test node_rank(st) == r ÷ 4
            @test node_world_size(st) == 4
            @test federated_local_rank(st) == r % 8
            @test replica_local_rank(st) == r % 4
            @test replica_rank(st) == (r % 8) ÷ 4
            @test receive_from(st) == recv[r+1]
            @test is_sender(st) == (recv[r+1] === nothing)
            @test members(st, XFFL.GROUP_FEDERATED) == [r % 8, r % 8 + 8]
            @test members(st, XFFL.GROUP_REPLICA) == [8 * (r ÷ 8) + r % 4, 8 * (r ÷ 8) + r % 4 + 4]
            @test members(st, XFFL.GROUP_HSDP_SHARD) == collect(4 * (r ÷ 4) .+ (0:3))
            @test members(st, XFFL.GROUP_FEDERATION) == collect(8 * (r ÷ 8) .+ (0:7))
            destroy!(st)
        end
    end

    @testset "text form" begin
        st = plan(1, 8; sizes = [4], hsdp = 2)
        text = XFFL.describe(st)
        @test occursin("Receives from\t\t3", text)
        @test occursin("Federated group\t\t[1, 5]", text)
        @test occursin("\"receive_from\"", XFFL.describe(st; format = :json))
        @test master_addr(st) == "127.0.0.1"
        destroy!(st)
    end

    @testset "errors" begin
        State() do st
            e = try set_hsdp!(st, 2); nothing catch err; err end
            @test e isa XFFLError && e.code == XFFL.ESTATE && !isempty(e.message)
            e = try set_global!(st, XFFL.BACKEND_NONE, XFFL.DEVICE_CPU, "127.0.0.1", 29500, 5, 4); nothing catch err; err end
            @test e isa XFFLError && e.code == XFFL.EINVAL && occursin("5", e.message)
            set_global!(st, XFFL.BACKEND_NONE, XFFL.DEVICE_CPU, "127.0.0.1", 29500, 0, 8)
            e = try federated_scaling!(st, [3, 3]); nothing catch err; err end
            @test e isa XFFLError && e.code == XFFL.EINVAL && occursin("6", e.message)
            @test federated_rank(st) === nothing
            @test_throws XFFLError get_int(st, XFFL.ATTR_FEDERATED_RANK)
            @test_throws XFFLError group(st, XFFL.GROUP_FEDERATED)
        end
    end

    @testset "one-rank collectives and federated average" begin
        State() do st
            set_global!(st, XFFL.BACKEND_NONE, XFFL.DEVICE_CPU, "127.0.0.1", 29500, 0, 1)
            for T in (Float32, Float64, Int32, Int64, Int8, UInt8)
                x = T[1, 2, 3]
                create_process_group(st, [0]; description = "one") do g
                    @test allreduce!(g, copy(x), zeros(T, 3), :sum) == x
                    @test allreduce!(g, copy(x), :max) == x
                    @test bcast!(g, copy(x), 0) == x
                    @test allgather!(g, x, zeros(T, 3)) == x
                    @test reduce_scatter!(g, x, zeros(T, 3), :min) == x
                    @test_throws DimensionMismatch allgather!(g, x, zeros(T, 2))
                end
            end
            @test_throws XFFLError federated_average!(st, [1.0, 2.0])
            federated_scaling!(st, [1])
            @test federated_average!(st, [1.0, 2.0]) == [1.0, 2.0]
            @test federated_average_many!(st, [Float32[1, 2], Float32[3]]) == [Float32[1, 2], Float32[3]]
            barrier(group(st, XFFL.GROUP_WORLD))
        end
    end

    @testset "caller's layouts, senders, string options" begin
        State() do st
            set_global!(st, XFFL.BACKEND_NONE, XFFL.DEVICE_CPU, "127.0.0.1", 29500, 5, 12)
            set_fsdp_mesh!(st, [9, 5, 7, 11])
            @test XFFL.mesh(st, XFFL.MESH_FSDP) == [5, 7, 9, 11]
            @test members(st, XFFL.GROUP_FSDP) == [5, 7, 9, 11]
            unset_fsdp!(st)
            err = try set_fsdp_mesh!(st, [0, 1]); nothing catch e; e end
            @test err isa XFFLError && err.code == XFFL.EINVAL && occursin("rank 5 is not in the fsdp mesh", err.message)
            set_hsdp_manual!(st, 1, 2, 2, [6])
            @test members(st, XFFL.GROUP_HSDP_SHARD) == [4, 5]
            unset_hsdp!(st)
            @test_throws XFFLError set_hsdp_manual!(st, 0, 2, 2, [6])
            @test_throws XFFLError communicating_processes(st, 0)
            federated_scaling!(st, [4, 8]; hsdp = 2)
            @test communicating_processes(st, 0) == [0, 3]
            @test communicating_processes(st, 1) == [4, 7]
            @test_throws XFFLError communicating_processes(st, 2)
        end
        State() do st
            set_option_string!(st, XFFL.OPT_JOB_ID, "julia-job")
            @test get_option_string(st, XFFL.OPT_JOB_ID) == "julia-job"
            set_option_string!(st, XFFL.OPT_AUTH_TOKEN, "ju1ia-secret")
            err = try get_option_string(st, XFFL.OPT_AUTH_TOKEN); nothing catch e; e end
            @test err isa XFFLError && !occursin("ju1ia-secret", err.message)
            @test_throws XFFLError set_option_string!(st, XFFL.OPT_TIMEOUT_MS, "5")
            @test_throws XFFLError set_option!(st, XFFL.OPT_JOB_ID, 1)
            set_global!(st, XFFL.BACKEND_NONE, XFFL.DEVICE_CPU, "127.0.0.1", 29500, 0, 1)
            @test_throws XFFLError set_option_string!(st, XFFL.OPT_JOB_ID, "late")
        end
    end

    @testset "nothing exported clashes (rank, stream, describe, mesh stay qualified)" begin
        for name in (:rank, :stream, :describe, :mesh, :set_log_callback)
            @test name ∉ names(XFFL)
            @test isdefined(XFFL, name)
        end
        State() do st
            set_global!(st, XFFL.BACKEND_NONE, XFFL.DEVICE_CPU, "127.0.0.1", 29500, 3, 4)
            @test XFFL.rank(st) == 3
        end
    end

    @testset "reductions as functions" begin
        State() do st
            set_global!(st, XFFL.BACKEND_NONE, XFFL.DEVICE_CPU, "127.0.0.1", 29500, 0, 1)
            g = group(st, XFFL.GROUP_WORLD)
            x = Float64[1, -2, 3]
            for op in (+, *, min, max, :avg, XFFL.SUM)
                @test allreduce!(g, copy(x), zeros(3), op) == x
            end
            @test allreduce!(g, copy(x)) == x   # + by default
            @test reduce_scatter!(g, x, zeros(3), max) == x
            @test_throws ArgumentError allreduce!(g, copy(x), -)
        end
    end

    @testset "ended groups throw instead of reading freed memory" begin
        st = State()
        set_global!(st, XFFL.BACKEND_NONE, XFFL.DEVICE_CPU, "127.0.0.1", 29500, 1, 4)
        set_hsdp!(st, 2)
        shard = group(st, XFFL.GROUP_HSDP_SHARD)
        world = group(st, XFFL.GROUP_WORLD)
        @test ranks(shard) == [0, 1]
        unset_hsdp!(st)
        err = try ranks(shard); nothing catch e; e end
        @test err isa XFFLError && err.code == XFFL.ESTATE && occursin("unset_hsdp!", err.message)
        @test occursin("ended", sprint(show, shard))   # a REPL may display it: no throw, no C call
        @test ranks(world) == [0, 1, 2, 3]             # WORLD lives with the state
        set_hsdp!(st, 2)
        @test ranks(group(st, XFFL.GROUP_HSDP_SHARD)) == [0, 1]
        @test_throws XFFLError group_size(shard)       # still ended: a new layout does not revive it
        destroy!(st)
        err = try ranks(world); nothing catch e; e end
        @test err isa XFFLError && err.code == XFFL.ESTATE && occursin("destroyed", err.message)
        @test occursin("ended", sprint(show, world))
        @test_throws XFFLError get_int(st, XFFL.ATTR_RANK)
        destroy!(st)                                   # twice is fine
        State() do one
            set_global!(one, XFFL.BACKEND_NONE, XFFL.DEVICE_CPU, "127.0.0.1", 29500, 0, 1)
            owned = create_process_group(one, [0])
            destroy!(owned)
            @test_throws XFFLError ranks(owned)
            kept = create_process_group(one, [0])
            destroy!(one)                              # owned groups go first, then the state
            @test_throws XFFLError ranks(kept)
        end
    end

    @testset "library from the environment, then preferences" begin
        withenv("XFFL_LIBRARY" => "/somewhere/libxffl.so") do
            @test XFFL.LibXFFL.library_path() == "/somewhere/libxffl.so"
        end
        withenv("XFFL_LIBRARY" => nothing) do
            @test XFFL.LibXFFL.library_path() isa String
        end
        @test haskey(ENV, "UCX_ERROR_SIGNALS")         # set by __init__ unless the user had set it
    end

    if VERSION >= v"1.9"
        @testset "log callback" begin
            lines = Tuple{Int,Union{Int,Nothing},String}[]
            XFFL.set_log_callback((level, rank, text) -> push!(lines, (level, rank, text)))
            State() do st
                set_option!(st, XFFL.OPT_LOG_LEVEL, XFFL.LOG_INFO)
                set_global!(st, XFFL.BACKEND_NONE, XFFL.DEVICE_CPU, "127.0.0.1", 29500, 1, 4)
                set_hsdp!(st, 2)
            end
            # Lines reach the function on a task of its own: wait for it, bounded.
            got = timedwait(() -> any(l -> startswith(l[3], "group creation for xffl_set_hsdp"), lines), 10.0)
            @test got === :ok
            line = lines[findfirst(l -> startswith(l[3], "group creation for xffl_set_hsdp"), lines)]
            @test line[1] == XFFL.LOG_INFO && line[2] == 1
            XFFL.set_log_callback(nothing)
        end
    end

    @testset "version" begin
        @test XFFL.version() >= v"0.1.0"
    end
end
