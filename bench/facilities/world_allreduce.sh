#!/usr/bin/env bash
# A sum over WORLD between two simulated facilities (tests/netns/README.md has the picture): the
# allreduce schedules of one group whose members span both, PER_FACILITY ranks on each side, ranks of a
# facility consecutive (as on the nodes of a real job). The link: RATE each way, DELAY_MS each way;
# inside a facility, TCP through lo.
#
#   bench/facilities/world_allreduce.sh BUILD_DIR [BEFORE_BUILD_DIR]      (root; BUILD_DIR built with
#                                    BUILD_TESTING: netns_delay_relay and facilities-average-bench)
# Environment: SIZES_KIB ("256 1024 4096 16384"), RATE (1gbit), DELAY_MS (10), PER_FACILITY (2),
#              ITERATIONS (5 timed calls a launch), REPEAT (3 launches a size and build),
#              XFFL_BENCH_TIMEOUT (120 s).
# With BEFORE_BUILD_DIR, that build's facilities-average-bench (the tree before a change) runs too,
# launch by launch interleaved with BUILD_DIR's, in an order that turns each round.
# Prints one line a launch, then per size and build: the median over launches of each launch's median
# call (the slowest rank's), and the bytes that crossed the link in one call (veth counters, both ways).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$(cd "${1:?usage: world_allreduce.sh BUILD_DIR [BEFORE_BUILD_DIR]}" && pwd) || exit 2
before=""
[ -n "${2:-}" ] && { before=$(cd "$2" && pwd) || exit 2; }
# shellcheck source=../../tests/netns/facilities.sh
. "$root/tests/netns/facilities.sh"

sizes_kib=${SIZES_KIB:-256 1024 4096 16384}
rate=${RATE:-1gbit}
delay_ms=${DELAY_MS:-10}
per_facility=${PER_FACILITY:-2}
iterations=${ITERATIONS:-5}
repeat=${REPEAT:-3}
timeout=${XFFL_BENCH_TIMEOUT:-120}
world=$((2 * per_facility))
layout="$per_facility,$per_facility"

relay=$build/tests/netns/netns_delay_relay
declare -A job=([after]=$build/bench/facilities/facilities-average-bench)
builds=(after)
[ -n "$before" ] && { job[before]=$before/bench/facilities/facilities-average-bench; builds=(before after); }
facilities_bench_up "$relay" "$rate" "$delay_ms" "${job[@]}"
echo "link: $rate each way (tbf), ${delay_ms} ms each way (relay); WORLD of $world ranks, facilities ($layout);" \
  "sum of f32, $iterations timed calls a launch, $repeat launches a size and build"
results=$FAC_WORKDIR/results
: > "$results"

# launch BUILD KIB ROUND: one launch of every rank; its RESULT lines, tagged, into $results.
launch() {
  local which=$1 kib=$2 round=$3 r failed=0
  local count=$((kib * 1024 / 4))
  FAC_PIDS=()
  for r in $(seq 0 $((world - 1))); do
    facilities_launch_rank "$r" "$world" "$layout" 0 "$timeout" "$FAC_WORKDIR/$which.$kib.$r.log" -- \
      "${job[$which]}" "$count" world "$iterations"
  done
  for r in $(seq 0 $((world - 1))); do wait "${FAC_PIDS[$r]}" || failed=1; done
  FAC_PIDS=()
  if [ $failed -ne 0 ]; then
    echo "$which at $kib KiB failed:" >&2
    tail -n 5 "$FAC_WORKDIR/$which.$kib".*.log >&2
    return 1
  fi
  grep '^RESULT' "$FAC_WORKDIR/$which.$kib.0.log" | sed "s/^RESULT /RESULT build=$which kib=$kib launch=$round /" \
    | tee -a "$results"
}

for round in $(seq 0 $((repeat - 1))); do
  for kib in $sizes_kib; do
    order=("${builds[@]}")
    [ $((round % 2)) -eq 1 ] && order=($(printf '%s\n' "${builds[@]}" | tac))
    for which in "${order[@]}"; do launch "$which" "$kib" "$round" > /dev/null || exit 1; done
  done
done

# Per size and build: each launch's median call, then the median over launches; link bytes of the
# first timed call of each launch, the median over launches.
python3 - "$results" << 'EOF'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    v = dict(kv.split("=", 1) for kv in line.split()[1:])
    key = (int(v["kib"]), v["build"])
    launch = runs.setdefault(key, {}).setdefault(v["launch"], {"seconds": [], "bytes": None})
    launch["seconds"].append(float(v["seconds"]))
    if v["iteration"] == "0":
        launch["bytes"] = int(v["link_tx"]) + int(v["link_rx"])
builds = sorted({b for _, b in runs}, reverse=True)  # before, after
print("\n| size | " + " | ".join(f"{b} ms" for b in builds) + " | " + " | ".join(f"{b} link MiB" for b in builds)
      + (" | after / before |" if len(builds) == 2 else " |"))
print("|---:|" + "---:|" * (2 * len(builds) + (1 if len(builds) == 2 else 0)))
for kib in sorted({k for k, _ in runs}):
    ms, mib = {}, {}
    for b in builds:
        launches = runs.get((kib, b), {}).values()
        ms[b] = statistics.median(statistics.median(l["seconds"]) for l in launches) * 1e3
        mib[b] = statistics.median(l["bytes"] for l in launches) / 2**20
    row = [f"{kib} KiB"] + [f"{ms[b]:.1f}" for b in builds] + [f"{mib[b]:.2f}" for b in builds]
    if len(builds) == 2:
        row.append(f"{ms['after'] / ms['before']:.2f}")
    print("| " + " | ".join(row) + " |")
EOF
