#!/usr/bin/env bash
# Striping on a long fat pipe: the wan crossing backend (XFFL_CROSS_FACILITY_BACKEND=wan) with 1 stream
# against N streams against the link rate, every TCP connection's window capped in both namespaces
# (sysctl net.ipv4.tcp_rmem / tcp_wmem) so that one stream cannot fill the link (window / RTT). Also
# with encryption. Prints ratios against the rate of N plain TCP streams one way ("x bound") and N
# each way at once ("x 2-way", the pattern of an average); a benchmark, not a test.
#
#   sudo bench/facilities/wan_streams.sh [BUILD_DIR]     (BUILD_DIR default build-netns, as run.sh)
# Environment: MODEL_MIB (64), RATE (1gbit), DELAY_MS (50 each way), WINDOW_KIB (1024), STREAMS (16),
#              PER_FACILITY (1), ITERATIONS (2), XFFL_BENCH_TIMEOUT (300).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$(cd "${1:-$root/build-netns}" && pwd) || exit 2
# shellcheck source=../../tests/netns/facilities.sh
. "$root/tests/netns/facilities.sh"
# shellcheck source=tcp_rate.sh
. "$here/tcp_rate.sh"

model_mib=${MODEL_MIB:-64}
rate=${RATE:-1gbit}
delay_ms=${DELAY_MS:-50}
window_kib=${WINDOW_KIB:-1024}
streams=${STREAMS:-16}
per_facility=${PER_FACILITY:-1}
iterations=${ITERATIONS:-2}
timeout=${XFFL_BENCH_TIMEOUT:-300}
world=$((2 * per_facility))
sizes="$per_facility,$per_facility"
count=$((model_mib * 1024 * 1024 / 4))
model_bytes=$((model_mib * 1024 * 1024))

relay=$build/tests/netns/netns_delay_relay
job=$build/bench/facilities/facilities-average-bench
stream=$build/bench/facilities/facilities-tcp-stream
facilities_bench_up "$relay" "$rate" "$delay_ms" "$job" "$stream"
facilities_cap_window $((window_kib << 10)) || { echo "could not cap the window" >&2; exit 1; }
echo "link: $rate each way, ${delay_ms} ms each way (RTT $((2 * delay_ms)) ms), window cap ${window_kib} KiB per" \
  "connection (one stream at most $(awk -v w="$window_kib" -v d="$delay_ms" 'BEGIN{printf "%.0f", w*1024*8/(2*d/1000)/1e6}') Mbit/s);" \
  "model $model_mib MiB f32, $per_facility rank(s) per facility; uptime: $(uptime)"

# Link rate with plain TCP through the same path (tcp_rate.sh): N streams one way, and N each way at
# once (the pattern of an average: both facilities send their model), the slower direction's rate.
one_tcp=$(streams_rate 1 $((256 << 20)) 0 "$stream")
n_tcp=$(streams_rate "$streams" $(((256 << 20) / streams)) 0 "$stream")
n_two_way=$(streams_rate "$streams" $(((256 << 20) / streams)) 1 "$stream" | sort -n | head -1)
echo "plain TCP: 1 stream $(awk -v r="$one_tcp" 'BEGIN{printf "%.0f", r/1e6}') Mbit/s; $streams streams" \
  "$(awk -v r="$n_tcp" 'BEGIN{printf "%.0f", r/1e6}') Mbit/s; $streams streams each way at once" \
  "$(awk -v r="$n_two_way" 'BEGIN{printf "%.0f", r/1e6}') Mbit/s per direction (slower one)"

results=$FAC_WORKDIR/results
: > "$results"
# run_wan LABEL STREAMS ENCRYPTION
run_wan() {
  local label=$1 n=$2 encryption=$3 r
  FAC_PIDS=()
  for r in $(seq 0 $((world - 1))); do
    facilities_launch_rank "$r" "$world" "$sizes" 0 "$timeout" "$FAC_WORKDIR/wan.$label.$r.log" -- \
      env XFFL_CROSS_FACILITY_BACKEND=wan XFFL_WAN_STREAMS="$n" XFFL_WAN_ENCRYPTION="$encryption" \
      XFFL_AUTH_TOKEN=bench-secret "$job" "$count" hier "$iterations"
  done
  local failed=0
  for r in $(seq 0 $((world - 1))); do wait "${FAC_PIDS[$r]}" || failed=1; done
  FAC_PIDS=()
  if [ $failed -ne 0 ]; then
    echo "wan $label failed:" >&2
    tail -n 5 "$FAC_WORKDIR"/wan."$label".*.log >&2
    return 1
  fi
  grep '^RESULT' "$FAC_WORKDIR/wan.$label.0.log" | sed "s/^RESULT/RESULT label=$label/" >> "$results"
}
run_wan 1-stream 1 none
run_wan "$streams-streams" "$streams" none
run_wan "$streams-streams-aes" "$streams" aes-256-gcm

# Each facility must receive the other's model: model bytes cross each way; bound at the link rate.
awk -v model="$model_bytes" -v bps="$n_tcp" -v duplex="$n_two_way" -v rate="$rate" '
  /^RESULT/ {
    for (i = 2; i <= NF; ++i) { split($i, kv, "="); v[kv[1]] = kv[2] }
    key = v["label"]
    if (!(key in best) || v["seconds"] < best[key]) best[key] = v["seconds"]
    if (!(key in seen)) { seen[key] = 1; order[++n] = key }
  }
  END {
    bound = model * 8 / bps
    two_way = duplex > 0 ? model * 8 / duplex : 0
    printf "\nbound: the model crosses each way at the %s-stream TCP rate, %.0f Mbit/s: %.3f s", "N", bps / 1e6, bound
    printf " (at the two-way rate, %.0f Mbit/s: %.3f s)\n\n", duplex / 1e6, two_way
    printf "%-22s %10s %12s %12s %12s %12s\n", "wan", "seconds", "Mbit/s", "x bound", "x 2-way", "x 1-stream"
    for (k = 1; k <= n; ++k) {
      key = order[k]
      printf "%-22s %10.3f %12.0f %12.2f %12s %12.2f\n", key, best[key], model * 8 / best[key] / 1e6, best[key] / bound,
             (two_way > 0) ? sprintf("%.2f", best[key] / two_way) : "-", best[order[1]] / best[key]
    }
  }' "$results"
