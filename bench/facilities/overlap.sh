#!/usr/bin/env bash
# Overlap between two simulated facilities (tests/netns/README.md has the picture): a training step plus
# a nonblocking federated average (xffl_federated_average_start ... xffl_request_wait), against the two
# done one after the other (facilities-overlap-bench; the step is calibrated to the average's length).
#
#   bench/facilities/overlap.sh [BUILD_DIR]     (root; BUILD_DIR default build-netns, built with
#                                                BUILD_TESTING: targets netns_delay_relay and
#                                                facilities-overlap-bench)
# Environment: MODEL_MIB (64), RATE (1gbit), DELAY_MS (10), PER_FACILITY (2), HSDP (2), ITERATIONS (3),
#              XFFL_BENCH_TIMEOUT (300 s per collective).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$(cd "${1:-$root/build-netns}" && pwd) || exit 2
# shellcheck source=../../tests/netns/facilities.sh
. "$root/tests/netns/facilities.sh"

model_mib=${MODEL_MIB:-64}
rate=${RATE:-1gbit}
delay_ms=${DELAY_MS:-10}
per_facility=${PER_FACILITY:-2}
hsdp=${HSDP:-2}
iterations=${ITERATIONS:-3}
timeout=${XFFL_BENCH_TIMEOUT:-300}
world=$((2 * per_facility))
sizes="$per_facility,$per_facility"
count=$((model_mib * 1024 * 1024 / 4 / hsdp))   # f32 elements of one rank's shard

relay=$build/tests/netns/netns_delay_relay
job=$build/bench/facilities/facilities-overlap-bench
facilities_bench_up "$relay" "$rate" "$delay_ms" "$job"
echo "link: $rate each way (tbf), ${delay_ms} ms each way (relay); facilities of $per_facility ranks, hsdp $hsdp;" \
  "model $model_mib MiB f32, shard $((model_mib / hsdp)) MiB per rank"

FAC_PIDS=()
for r in $(seq 0 $((world - 1))); do
  facilities_launch_rank "$r" "$world" "$sizes" "$hsdp" "$timeout" "$FAC_WORKDIR/overlap.$r.log" -- \
    "$job" "$count" "$iterations"
done
failed=0
for r in $(seq 0 $((world - 1))); do wait "${FAC_PIDS[$r]}" || failed=1; done
FAC_PIDS=()
if [ $failed -ne 0 ]; then
  echo "the overlap benchmark failed:" >&2
  tail -n 5 "$FAC_WORKDIR"/overlap.*.log >&2
  exit 1
fi

# Best of the iterations for each column; the ratio sequential / overlapped (ideal: (step + average) /
# max(step, average), 2 when the step is calibrated to the average).
awk '
  /^RESULT/ {
    for (i = 2; i <= NF; ++i) { split($i, kv, "="); v[kv[1]] = kv[2] }
    for (k in v) if (k != "count" && k != "iteration" && (!(k in best) || v[k] < best[k])) best[k] = v[k]
  }
  END {
    printf "\n%-10s %-10s %-12s %-12s %-22s %s\n", "step", "average", "sequential", "overlapped",
           "sequential/overlapped", "ideal"
    longer = best["step"] > best["average"] ? best["step"] : best["average"]
    printf "%-10.3f %-10.3f %-12.3f %-12.3f %-22.2f %.2f\n", best["step"], best["average"], best["sequential"],
           best["overlapped"], best["sequential"] / best["overlapped"], (best["step"] + best["average"]) / longer
  }' "$FAC_WORKDIR/overlap.0.log"
