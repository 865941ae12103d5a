# The xffl example in Julia: print this rank's plan of the job, then average a small "model" across the
# federated groups. Alone it runs as a 1-rank world with backend none; under xffl-run it reads RANK,
# WORLD_SIZE, MASTER_ADDR, MASTER_PORT, XFFL_FEDERATED ("4" or "2,6"), XFFL_HSDP and XFFL_BACKEND.
#
#   XFFL_LIBRARY=/path/to/libxffl.so julia --project=bindings/julia/XFFL examples/julia/plan_and_average.jl
#   xffl-run -n 8 --federated 2,6 --hsdp 2 --backend ucx -- \
#       julia --project=bindings/julia/XFFL examples/julia/plan_and_average.jl
using XFFL

env_int(name, default) = parse(Int, get(ENV, name, string(default)))

rank = env_int("RANK", 0)
world = env_int("WORLD_SIZE", 1)
sizes = parse.(Int, split(get(ENV, "XFFL_FEDERATED", string(world)), ","))
backend = Dict("none" => XFFL.BACKEND_NONE, "ucx" => XFFL.BACKEND_UCX, "nccl" => XFFL.BACKEND_NCCL)[
    get(ENV, "XFFL_BACKEND", world > 1 ? "ucx" : "none")]

State() do st   # destroyed when the block ends, even on an error
    set_global!(st, backend, XFFL.DEVICE_CPU, get(ENV, "MASTER_ADDR", "127.0.0.1"), env_int("MASTER_PORT", 29500),
                rank, world)
    federated_scaling!(st, sizes; hsdp = env_int("XFFL_HSDP", 0))
    rank == 0 && println(describe(st))

    # Each federated group trained its own model; the average makes them equal again.
    weights = Float32(federated_rank(st) + 1) .* Float32[1, 2, 3, 4]
    federated_average!(st, weights)
    println("rank $rank (federated group $(federated_rank(st))) averaged model: $weights")
end
