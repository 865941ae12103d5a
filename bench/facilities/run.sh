#!/usr/bin/env bash
# Federated averaging between two simulated facilities (tests/netns/README.md has the picture):
#   (a) bytes over the link for HIERARCHICAL vs FLAT (veth counters around one average);
#   (b) time of one average of a MODEL_MIB f32 model against the lower bound
#       (bytes that must cross one way / the link rate measured with plain TCP streams on the same path),
#       and Open MPI doing the same data movement (MPI_Allreduce over the same federated groups).
#
#   bench/facilities/run.sh [BUILD_DIR]         (root; BUILD_DIR default build-netns; built with
#                                                BUILD_TESTING for tests/netns's delay relay)
# Environment: MODEL_MIB (256), RATE (1gbit), DELAY_MS (10), PER_FACILITY (4), HSDP (2), ITERATIONS (2),
#              SKIP_MPI (unset), XFFL_BENCH_TIMEOUT (300 s per collective), WIRE_FORMATS ("f32"; e.g.
#              "f32 bf16 int8_block int4_block": xffl's averages once per XFFL_WIRE_FORMAT, each against its
#              own bound, compressed bytes / link rate, and against f32), CROSSING ("ucx wan": xffl's
#              averages once per XFFL_CROSS_FACILITY_BACKEND; wan is the default in facility mode, ucx
#              a UCX context of the crossing groups' own (every message eager), none the main UCX
#              context's endpoints (rendezvous above UCX's threshold); the table's impl says which).
# The table gives each average against two bounds: the fastest rate measured (one TCP stream one way,
# "x bound") and the rate of 2 streams each way at once ("x 2-way"), the pattern of an average, which
# this machine's user-space delay relays carry more slowly than one direction.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$(cd "${1:-$root/build-netns}" && pwd) || exit 2
# shellcheck source=../../tests/netns/facilities.sh
. "$root/tests/netns/facilities.sh"
# shellcheck source=tcp_rate.sh
. "$here/tcp_rate.sh"

model_mib=${MODEL_MIB:-256}
rate=${RATE:-1gbit}
delay_ms=${DELAY_MS:-10}
per_facility=${PER_FACILITY:-4}
hsdp=${HSDP:-2}
iterations=${ITERATIONS:-2}
timeout=${XFFL_BENCH_TIMEOUT:-300}
world=$((2 * per_facility))
sizes="$per_facility,$per_facility"
replicas=$((per_facility / hsdp))
count=$((model_mib * 1024 * 1024 / 4 / hsdp))   # f32 elements of one rank's shard
model_bytes=$((model_mib * 1024 * 1024))

relay=$build/tests/netns/netns_delay_relay
job=$build/bench/facilities/facilities-average-bench
mpi_job=$build/bench/facilities/facilities-mpi-average-bench
stream=$build/bench/facilities/facilities-tcp-stream
facilities_bench_up "$relay" "$rate" "$delay_ms" "$job" "$stream"
echo "link: $rate each way (tbf), ${delay_ms} ms each way (relay); facilities of $per_facility ranks, hsdp $hsdp" \
  "(R = $replicas replicas per facility); model $model_mib MiB f32, shard $((model_mib / hsdp)) MiB per rank"

# --- link rate: plain TCP through the same path ------------------------------------------------------
# measure_link WHEN: one stream one way, then 2 streams each way at once (the pattern of the averages:
# one flow per sender pair and direction); keeps the fastest rate seen in link_bps, and the fastest
# two-way rate in duplex_bps.
link_bps=0
duplex_bps=0
measure_link() {
  local one_way duplex
  one_way=$(streams_rate 1 $((128 << 20)) 0 "$stream")
  duplex=$(streams_rate 2 $((96 << 20)) 1 "$stream" | sort -n | head -1)   # the slower direction, both loaded
  echo "TCP through the link ($1): one stream one way $(awk -v r="$one_way" 'BEGIN{printf "%.0f", r/1e6}') Mbit/s;" \
    "2 streams each way at once: $(awk -v r="$duplex" 'BEGIN{printf "%.0f", r/1e6}') Mbit/s per direction (slower one)"
  # The machine is shared: the fastest measurement gives the tightest (most demanding) bound.
  [ "${one_way:-0}" -gt "$link_bps" ] && link_bps=$one_way
  [ "${duplex:-0}" -gt "$link_bps" ] && link_bps=$duplex
  [ "${duplex:-0}" -gt "$duplex_bps" ] && duplex_bps=$duplex
}
measure_link before

# --- the averages -----------------------------------------------------------------------------------
results=$FAC_WORKDIR/results
: > "$results"

run_xffl() {
  local strategy=$1 wire=${2:-f32} crossing=${3:-ucx} r
  local name=$strategy.$wire.$crossing
  FAC_PIDS=()
  for r in $(seq 0 $((world - 1))); do
    XFFL_WIRE_FORMAT=$wire XFFL_CROSS_FACILITY_BACKEND=$crossing facilities_launch_rank "$r" "$world" "$sizes" \
      "$hsdp" "$timeout" "$FAC_WORKDIR/xffl.$name.$r.log" -- "$job" "$count" "$strategy" "$iterations"
  done
  local failed=0
  for r in $(seq 0 $((world - 1))); do wait "${FAC_PIDS[$r]}" || failed=1; done
  FAC_PIDS=()
  if [ $failed -ne 0 ]; then
    echo "xffl $strategy ($wire, $crossing crossing) failed:" >&2
    tail -n 5 "$FAC_WORKDIR"/xffl."$name".*.log >&2
    return 1
  fi
  grep '^RESULT' "$FAC_WORKDIR/xffl.$name.0.log" | sed "s/impl=xffl /impl=xffl-$crossing /" >> "$results"
}

# Open MPI: mpirun runs inside facility 0 (its PMIx server must be reachable from both facilities, so
# it listens on the TUN address, with remote connections allowed); ranks of facility 1 enter their
# namespace through a wrapper. ob1 + tcp BTL on xtun only: no shared memory across the link.
run_mpi() {
  local strategy=$1 wrapper=$FAC_WORKDIR/mpi_wrapper.sh
  cat > "$wrapper" << EOF
#!/usr/bin/env bash
if [ "\$OMPI_COMM_WORLD_RANK" -lt $per_facility ]; then export FACILITY_VETH=${FAC_VETH[0]}; exec "\$@"; fi
export FACILITY_VETH=${FAC_VETH[1]}
exec ip netns exec ${FAC_NS[1]} "\$@"
EOF
  chmod +x "$wrapper"
  if ! ip netns exec "${FAC_NS[0]}" env PMIX_MCA_ptl_tcp_if_include=198.19.0.0/16 \
    PMIX_MCA_ptl_tcp_remote_connections=1 timeout $((timeout + 60)) \
    mpirun --allow-run-as-root --oversubscribe --bind-to none -np "$world" --mca pml ob1 --mca btl tcp,self \
    --mca btl_tcp_if_include "$FAC_TUN" --mca oob_tcp_if_include "$FAC_TUN" \
    "$wrapper" "$mpi_job" "$count" "$strategy" "$iterations" "$sizes" "$hsdp" > "$FAC_WORKDIR/mpi.$strategy.log" 2>&1; then
    echo "Open MPI $strategy failed:" >&2
    tail -n 20 "$FAC_WORKDIR/mpi.$strategy.log" >&2
    return 1
  fi
  grep '^RESULT' "$FAC_WORKDIR/mpi.$strategy.log" >> "$results"
}

for crossing in ${CROSSING:-ucx wan}; do
  for wire in ${WIRE_FORMATS:-f32}; do
    run_xffl hier "$wire" "$crossing"
    run_xffl flat "$wire" "$crossing"
  done
done
if [ -z "${SKIP_MPI:-}" ] && [ -x "$mpi_job" ] && command -v mpirun > /dev/null; then
  run_mpi hier
  run_mpi flat
else
  echo "Open MPI peer skipped (SKIP_MPI set, mpirun or facilities-mpi-average-bench missing)"
fi
measure_link after

# --- table ------------------------------------------------------------------------------------------
# Two facilities: each must receive the other's whole model, so model_bytes cross in each direction;
# the link is full duplex, so the bound is model_bytes / (per-direction rate).
awk -v model="$model_bytes" -v bps="$link_bps" -v duplex="$duplex_bps" -v mib="$model_mib" -v R="$replicas" '
  /^RESULT/ {
    delete v
    for (i = 2; i <= NF; ++i) { split($i, kv, "="); v[kv[1]] = kv[2] }
    if (!("wire" in v)) v["wire"] = "f32"  # Open MPI: f32
    key = v["impl"] " " v["strategy"] " " v["wire"]
    if (!(key in best) || v["seconds"] < best[key]) best[key] = v["seconds"]
    if (v["iteration"] == 0) bytes[key] = v["link_tx"] + v["link_rx"]
    if (!(key in seen)) { seen[key] = 1; order[++n] = key }
  }
  END {
    bound = model * 8 / bps
    two_way = duplex > 0 ? model * 8 / duplex : 0
    printf "\nlower bound: %d MiB must cross each way at %.0f Mbit/s = %.3f s", mib, bps / 1e6, bound
    printf " (at the two-way rate, %.0f Mbit/s: %.3f s)\n\n", duplex / 1e6, two_way
    # Bytes on the wire per f32 value, over 4: each format'"'"'s own bound is its compressed bytes / rate.
    size["f32"] = 1; size["bf16"] = 0.5; size["f16"] = 0.5
    size["int8_block"] = (1 + 4 / 256) / 4; size["int4_block"] = (0.5 + 4 / 64) / 4
    printf "%-9s %-6s %-10s %10s %14s %10s %10s %10s %10s\n", "impl", "avg", "wire", "seconds", "link bytes",
           "x model", "x bound", "x 2-way", "f32 / this"
    for (k = 1; k <= n; ++k) {
      key = order[k]; split(key, p, " ")
      f32 = p[1] " " p[2] " f32"
      printf "%-9s %-6s %-10s %10.3f %14d %10.2f %10.2f %10s %10s\n", p[1], p[2], p[3], best[key], bytes[key],
             bytes[key] / model, best[key] / (bound * size[p[3]]),
             (two_way > 0) ? sprintf("%.2f", best[key] / (two_way * size[p[3]])) : "-",
             (f32 in best) ? sprintf("%.2f", best[f32] / best[key]) : "-"
    }
    for (k = 1; k <= n; ++k) {
      split(order[k], p, " ")
      hier = p[1] " hier f32"; flat = p[1] " flat f32"
      if ((p[1] in told) || !(hier in bytes) || !(flat in bytes) || bytes[flat] <= 0) continue
      told[p[1]] = 1
      printf "\n%s: link bytes HIERARCHICAL / FLAT = %.3f (expected about 1/R = %.3f)", p[1], bytes[hier] / bytes[flat],
             1 / R
    }
    printf "\n"
  }' "$results"
