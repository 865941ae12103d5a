#!/usr/bin/env bash
# The facilities demo: federated training as three facility jobs that come and go, on this machine's
# CPUs, with no root needed. On a fresh Debian bookworm machine it installs what is missing and builds
# what it needs (dev preset, build/dev), then:
#   1. starts the built-in membership store (xffl-federation on loopback, authenticated with a random
#      job secret) and three facility jobs of 2, 4 and 2 ranks (xffl-run --facility F --federation
#      xffl://..., HSDP 2 inside each), each running examples/c/federated_sgd.c with
#      XFFL_FACILITY_FAULTS=continue;
#   2. kills facility 2's whole job (SIGKILL of every process) in the middle of training: facilities 0
#      and 1 go on without it, in a new epoch;
#   3. starts facility 2's job again: it is admitted at a round boundary, receives the current model
#      (HMAC-verified) and the round to resume after, and contributes again from the next round;
#   4. prints each facility's loss over the rounds, and checks that all three jobs end with every copy
#      of every shard bit-identical across all three facilities.
# Exit status non-zero if anything fails; every wait is bounded (no hang).
#
#   bash scripts/demo-facilities.sh [BUILD_DIR]
# With BUILD_DIR (a configured and built tree, e.g. build/ci) it uses the programs there and neither
# installs nor builds (tests/facilities runs it so). Options (environment): XFFL_SKIP_PACKAGES=1,
# XFFL_DEMO_ROUNDS (default 60) and XFFL_DEMO_ROUND_MS (default 250): the training's rounds and the
# least time of one, long enough for the kill and the restart to happen while the others train.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
# shellcheck source=scripts/demo-build.sh
source scripts/demo-build.sh

build=${1:-}
if [ -z "$build" ]; then
  demo_configure
  demo_build xffl-run xffl-federation federated_sgd
  build=build/dev
fi
run=$(demo_program "$build" xffl-run)
server=$(demo_program "$build" xffl-federation)
sgd=$(demo_program "$build" federated_sgd)

sizes=(2 4 2)
federated=$(IFS=,; echo "${sizes[*]}")
rounds=${XFFL_DEMO_ROUNDS:-60}
round_ms=${XFFL_DEMO_ROUND_MS:-250}
victim=2
max_time=$((rounds * round_ms / 1000 + 180))  # xffl-run ends a job still running after this long (exit 124)

work=$(mktemp -d "${TMPDIR:-/tmp}/xffl-facilities-demo.XXXXXX")
server_pid=""
declare -A session  # facility log name -> session id of its job (setsid: the job and all its ranks)
declare -A waiter   # facility log name -> the subshell that waits for the job (its exit status)

end_session() {  # end_session SID: SIGKILL every process of a job's session
  pkill -KILL -s "$1" 2>/dev/null || true
}
cleanup() {
  local sid_file
  for sid_file in "$work"/*.sid; do [ -s "$sid_file" ] && end_session "$(cat "$sid_file")"; done
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

show_logs() {
  for log in "$work"/*.log; do
    echo "--- $(basename "$log") (last lines)"
    tail -15 "$log"
  done
}
fail() {
  printf '\ndemo: %s\n' "$*" >&2
  show_logs >&2
  exit 1
}

# wait_for WHAT BOUND_SECONDS COMMAND...: polls COMMAND until it succeeds; fails naming WHAT after the bound.
wait_for() {
  local what=$1 bound=$2 start=$SECONDS
  shift 2
  until "$@"; do
    ((SECONDS - start < bound)) || fail "$what: not within $bound s"
    sleep 0.1
  done
}

# last_round LOG [LIVE]: the last round the log's facility printed (with those live facilities), or 0.
last_round() {
  local pattern='^\[[0-9]+\] round +[0-9]+ '
  [ -n "${2:-}" ] && pattern+=" .*live $2 "
  { grep -E "$pattern" "$1" || true; } | awk '{ n = $3 } END { print n + 0 }'
}
round_at_least() { (($(last_round "$1" "${3:-}") >= $2)); }

start_facility() {  # start_facility F LOGNAME: facility F's job in its own session, output to LOGNAME.log
  local f=$1 log="$work/$2.log"
  # The subshell waits for the job and exits with its status; its stderr (only bash's "Killed" line when
  # the job is killed) is dropped.
  (
    setsid "$run" -n "${sizes[$f]}" --federated "$federated" --hsdp 2 --backend ucx --timeout 60 \
      --max-time "$max_time" --facility "$f" --federation "$endpoint" -- "$sgd" --rounds "$rounds" \
      --round-ms "$round_ms" >"$log" 2>&1 &
    echo $! >"$work/$2.sid"
    wait $!
  ) 2>/dev/null &
  waiter[$2]=$!
  local sid_file="$work/$2.sid"
  sid_written() { [ -s "$sid_file" ]; }
  wait_for "$2's job started" 10 sid_written
  session[$2]=$(cat "$sid_file")
}

demo_say "the federation: xffl-federation on loopback, facilities of ${sizes[*]} ranks, HSDP 2, $rounds rounds"
export XFFL_AUTH_TOKEN XFFL_JOB_ID="facilities-demo-$$" XFFL_FACILITY_FAULTS=continue XFFL_LOG_LEVEL=info
XFFL_AUTH_TOKEN=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
"$server" --listen 127.0.0.1:0 >"$work/server.log" 2>&1 &
server_pid=$!
server_listening() { grep -q "listening on" "$work/server.log"; }
wait_for "xffl-federation listening" 10 server_listening
endpoint="xffl://$(sed -n 's/.*listening on \([^ ]*\).*/\1/p' "$work/server.log" | head -1)"
echo "membership store: $endpoint"
for f in 0 1 2; do start_facility "$f" "facility-$f"; done
echo "started three facility jobs: xffl-run -n N --federated $federated --hsdp 2 --facility F --federation $endpoint -- federated_sgd"

wait_for "facility $victim training (round 8)" 120 round_at_least "$work/facility-$victim.log" 8
demo_say "kill facility $victim's job in the middle of training"
killed_after=$(last_round "$work/facility-$victim.log")
end_session "${session[facility-$victim]}"
wait "${waiter[facility-$victim]}" || true
unset "session[facility-$victim]"
killed_at=$SECONDS
echo "SIGKILL of every process of facility $victim's job, after its round $killed_after"

survivors_on() { round_at_least "$work/facility-0.log" 1 "0,1" && round_at_least "$work/facility-1.log" 1 "0,1"; }
wait_for "facilities 0 and 1 going on without facility $victim" 60 survivors_on
echo "facilities 0 and 1 go on without it from round $(last_round "$work/facility-0.log" "0,1")," \
  "$((SECONDS - killed_at)) s after the kill (its lease ended; XFFL_FEDERATION_LEASE_TTL)"
grep -h "lost" "$work/facility-0.log" | head -1 | sed 's/^/  log: /' || true

demo_say "restart facility $victim's job"
start_facility "$victim" "facility-$victim-restarted"
restarted_joined() { grep -qE "round +[0-9]+ +facility $victim .*joined" "$work/facility-$victim-restarted.log"; }
wait_for "facility $victim admitted and healed" 120 restarted_joined
grep -hE "round +[0-9]+ +facility $victim .*joined" "$work/facility-$victim-restarted.log" | head -1 |
  sed 's/^\[[0-9]*\] */  /'
grep -h "admitted" "$work/facility-0.log" | head -1 | sed 's/^/  log: /' || true

demo_say "let the three facilities finish their $rounds rounds"
for name in facility-0 facility-1 "facility-$victim-restarted"; do
  # bounded by xffl-run --max-time
  wait "${waiter[$name]}" || fail "$name's job failed (exit $?; 124: still running after $max_time s)"
  unset "session[$name]"
done

demo_say "each facility's loss of the averaged model over its own data, by round"
printf '%6s' round
for f in 0 1 2; do printf '  %12s' "facility $f"; done
echo
loss_of() {  # loss_of LOG ROUND: the loss of the averaged model the log printed for that round, or "-"
  awk -v r="$2" '$2 == "round" && $3 == r { found = $NF } END { print (found == "" ? "-" : found) }' "$1"
}
for ((r = 1; r <= rounds; ++r)); do
  printf '%6d' "$r"
  for log in facility-0 facility-1 "facility-$victim"; do
    value=$(loss_of "$work/$log.log" "$r")
    [ "$value" = - ] && [ "$log" = "facility-$victim" ] && value=$(loss_of "$work/facility-$victim-restarted.log" "$r")
    printf '  %12s' "$value"
  done
  echo
done
echo "(-: facility $victim was down; its first round after the restart received the model, its loss from then on)"

demo_say "the proof: every copy of every shard bit-identical across the three facilities"
# Equal checksums alone would also hold if facility 2 only ever received the model: it must have been a
# contributor again after its return, in the others' rounds as in its own.
contributed=$(last_round "$work/facility-$victim-restarted.log" "0,1,2")
((contributed > 0)) || fail "facility $victim never contributed again after its restart (no round with live 0,1,2)"
(($(last_round "$work/facility-0.log" "0,1,2") == contributed)) ||
  fail "facility 0's last round with all three facilities differs from facility $victim's ($contributed)"
echo "facility $victim contributed again after its restart, through round $contributed"
checksums() { grep -hE "shard [0-9]+: [0-9]+ copies, checksum" "$1" | sed 's/^\[[0-9]*\] *//' | sed 's/ [0-9]* copies,//' | sort; }
for name in facility-0 facility-1 "facility-$victim-restarted"; do
  grep -q "bit-identical across the" "$work/$name.log" || fail "$name: the copies of a shard differ inside the job"
  checksums "$work/$name.log" >"$work/$name.sums"
  [ -s "$work/$name.sums" ] || fail "$name printed no checksums"
  echo "$name: $(tr '\n' ' ' <"$work/$name.sums")"
done
cmp -s "$work/facility-0.sums" "$work/facility-1.sums" && cmp -s "$work/facility-0.sums" "$work/facility-$victim-restarted.sums" ||
  fail "the facilities' final models differ"
echo "every copy of every shard is bit-identical across all three facilities"
demo_say "facilities demo done"
