# Simulated facilities on one host: sourced by run_netns_test.sh, run_netns_continue.sh and
# bench/facilities/run.sh. (See README.md in this folder for the pictures.)
#
#   facilities_can_run             0 when namespaces, veth, tbf and TUN work here (and a bridge, with
#                                  FAC_COUNT=3); else prints why
#   facilities_up RELAY RATE DELAY_MS
#                                  FAC_COUNT (default 2) facilities: namespaces, links shaped to RATE (tc
#                                  rate, e.g. 1gbit), TUNs and one delay relay per facility (DELAY_MS each
#                                  way); sets FAC_NS[0..FAC_COUNT-1]. Two facilities: one veth pair. Three:
#                                  each facility's veth goes to a bridge in a fourth, 'wan' namespace
#                                  (FAC_WAN_NS), shaped at both ends, and each relay routes by the
#                                  destination facility's subnet
#   facilities_link F down|up      cuts (restores) facility F's link: its veth down (up)
#   facilities_launch_rank R W SIZES HSDP TIMEOUT LOG -- PROG ARGS
#                                  starts rank R in its facility's namespace; pid appended to FAC_PIDS
#   facilities_down                kills what facilities_* started, deletes the namespaces (idempotent)
#   facilities_bench_up RELAY RATE DELAY_MS BINARY...
#                                  bench/facilities's start: exits 2 naming a binary not built, 77 where
#                                  facilities cannot run here, 1 where they could not be built; else the
#                                  facilities are up and facilities_down runs at exit
#   facilities_cap_window BYTES    caps every TCP connection's window in both namespaces (sysctl
#                                  net.ipv4.tcp_rmem / tcp_wmem maximum), so that one stream cannot fill
#                                  the link: window / RTT is its rate
# FAC_RELAY_EXTRA[f], set before facilities_up, adds arguments to facility f's relay (--flip-segment N).
#
# Everything created lives inside the namespaces (the veth ends are created there directly), so
# deleting them removes veths, bridge and TUNs; relay and rank processes are killed by pid first. Callers
# install `trap facilities_down EXIT`; a guard process started by facilities_up does the same if the
# caller is SIGKILLed (CTest's TIMEOUT). Setup is a few `ip -batch` / `tc` processes, not one per device.

FAC_COUNT=${FAC_COUNT:-2}
FAC_VETH=(xveth0 xveth1 xveth2)                   # the veth end in facility f
FAC_VETH_ADDR=(198.18.0.1 198.18.0.2 198.18.0.3)  # the link between the facilities
FAC_ADDR=(198.19.0.1 198.19.1.1 198.19.2.1)       # each facility's own address (ranks, store), on its TUN
FAC_SUBNET=(198.19.0.0/24 198.19.1.0/24 198.19.2.0/24)
FAC_WAN_NS=""                                      # three facilities: the namespace of the bridge
FAC_TUN=xtun
FAC_TUN_MTU=9000                         # jumbo frames: 1/6 of the packets a 1500 MTU would need
FAC_RELAY_PORT=4789
FAC_NS=()
FAC_RELAY_PIDS=()
FAC_PIDS=()
FAC_WORKDIR=""
FAC_RELAY_EXTRA=("" "" "")

facilities_can_run() {
  local probe="xffl-probe-$$-$RANDOM"
  if ! command -v ip > /dev/null || ! command -v tc > /dev/null; then
    echo "iproute2 (ip, tc) is not installed"
    return 1
  fi
  if ! ip netns add "$probe" 2> /dev/null; then
    echo "cannot create network namespaces here ('ip netns add' failed: needs root / CAP_SYS_ADMIN)"
    return 1
  fi
  # One ip process for the devices: on a failure it names the batch line, which says what is missing.
  local -a lines=("link add p0 type veth peer name p1" "tuntap add dev t0 mode tun")
  local -a missing=("cannot create a veth pair inside a namespace" "TUN devices are not available (/dev/net/tun)")
  if [ "$FAC_COUNT" -gt 2 ]; then
    lines+=("link add b0 type bridge")
    missing+=("cannot create a bridge inside a namespace")
  fi
  local why="" failed batch
  if [ ! -c /dev/net/tun ]; then
    why=${missing[1]}
  elif printf -v batch '%s\n' "${lines[@]}" && ! failed=$(ip -n "$probe" -b - 2>&1 <<< "$batch"); then
    [[ $failed =~ Command\ failed\ -:([0-9]+) ]] && why=${missing[$((BASH_REMATCH[1] - 1))]:-}
    [ -n "$why" ] || why="cannot create devices inside a namespace: $failed"
  elif ! tc -n "$probe" qdisc add dev p0 root tbf rate 1gbit burst 256kb latency 50ms 2> /dev/null; then
    why="the tbf qdisc is not available"
  fi
  ip netns del "$probe" 2> /dev/null
  if [ -n "$why" ]; then
    echo "$why"
    return 1
  fi
  return 0
}

# facilities_nap SECONDS: a pause without a process (read's timeout on a pipe nobody writes); the
# polling loops below nap often, and on a loaded machine a `sleep` process each time is what costs.
FAC_NAP_FD=""
facilities_nap() {
  if [ -z "$FAC_NAP_FD" ]; then
    exec {FAC_NAP_FD}<> <(:) || { sleep "$1"; return 0; }
  fi
  read -r -t "$1" -u "$FAC_NAP_FD"
  return 0
}

# Whether process $1 has finished: gone, or a zombie (kill -0 succeeds on a zombie).
facilities_finished() {
  local stat
  { read -r stat < "/proc/$1/stat"; } 2> /dev/null || return 0
  stat=${stat##*) }
  [ "${stat%% *}" = Z ]
}

# Waits up to $2 seconds for file $1.
facilities_wait_file() {
  local deadline=$((SECONDS + $2))
  while [ ! -e "$1" ]; do
    [ $SECONDS -ge $deadline ] && return 1
    facilities_nap 0.02
  done
}

# The guard: if the driver dies without facilities_down (ctest's timeout SIGKILLs the test's whole
# process tree, so no trap runs), it kills what still runs in the namespaces and deletes them. It reads
# a pipe whose only writer is the driver: end of file without the line "done" is the driver's death.
# It leaves the driver's process tree (the subshell that starts it exits at once, setsid) so that the
# kill does not reach it, and holds none of the test's output. FAC_GUARD_FD: the driver's end.
FAC_GUARD_FD=""
facilities_guard() {
  # shellcheck disable=SC2016  # the guard's own script
  local body='
    while read -r -u 3 line; do [ "$line" = done ] && exit 0; done
    for ns in "${@:2}"; do
      for pid in $(ip netns pids "$ns" 2> /dev/null); do kill -KILL "$pid"; done
    done
    printf "netns del %s\n" "${@:2}" | ip -force -b -
    [ -n "$1" ] && rm -rf "$1"'
  local remove=$FAC_WORKDIR
  [ -n "${FAC_KEEP_WORKDIR:-}" ] && remove=""
  exec {FAC_GUARD_FD}> >( (exec 3<&0; setsid bash -c "$body" guard "$remove" "$@" < /dev/null > /dev/null 2>&1 &) )
}

facilities_guard_done() {
  [ -n "$FAC_GUARD_FD" ] || return 0
  echo "done" >&"$FAC_GUARD_FD"
  exec {FAC_GUARD_FD}>&-
  FAC_GUARD_FD=""
}

# Every device comes from one ip (and one tc) process per namespace, and one in the host's namespace
# for the namespaces and the veths between them: a few processes instead of one per device.
facilities_up() {
  local relay=$1 rate=$2 delay_ms=$3
  local suffix f g last=$((FAC_COUNT - 1)) mtu=$((FAC_TUN_MTU + 100)) ns batch
  local -a tbf=(root tbf rate "$rate" burst 256kb latency 50ms)
  local -a host=() wan=() wan_tc=()
  printf -v suffix '%04x%04x' "$RANDOM" "$RANDOM"
  FAC_WORKDIR=$(mktemp -d "${TMPDIR:-/tmp}/xffl-netns.XXXXXX")
  FAC_NS=()
  for ((f = 0; f <= last; f++)); do FAC_NS+=("xffl-fac$f-$suffix"); done
  [ "$FAC_COUNT" -gt 2 ] && FAC_WAN_NS="xffl-wan-$suffix"
  local -a all=("${FAC_NS[@]}")
  [ -n "$FAC_WAN_NS" ] && all+=("$FAC_WAN_NS")
  facilities_guard "${all[@]}"
  for ns in "${all[@]}"; do host+=("netns add $ns"); done
  if [ "$FAC_COUNT" -eq 2 ]; then
    host+=("link add ${FAC_VETH[0]} netns ${FAC_NS[0]} mtu $mtu type veth peer name ${FAC_VETH[1]} netns ${FAC_NS[1]} mtu $mtu")
  else
    # The wan namespace's bridge, and facility f's veth into it (the bridge's end shaped too, so that
    # traffic toward f crosses RATE once more: each direction is shaped at both ends, as with two).
    wan=("link add xbridge type bridge" "link set xbridge up")
    for ((f = 0; f <= last; f++)); do
      host+=("link add ${FAC_VETH[$f]} netns ${FAC_NS[$f]} mtu $mtu type veth peer name xwan$f netns $FAC_WAN_NS mtu $mtu")
      wan+=("link set xwan$f master xbridge up")
      wan_tc+=("qdisc add dev xwan$f ${tbf[*]}")
    done
  fi
  printf -v batch '%s\n' "${host[@]}"
  ip -b - <<< "$batch" || return 1
  if [ -n "$FAC_WAN_NS" ]; then
    printf -v batch '%s\n' "${wan[@]}"
    ip -n "$FAC_WAN_NS" -b - <<< "$batch" || return 1
    printf -v batch '%s\n' "${wan_tc[@]}"
    tc -n "$FAC_WAN_NS" -b - <<< "$batch" || return 1
  fi
  for ((f = 0; f <= last; f++)); do
    ns=${FAC_NS[$f]}
    local -a peers=() lines=("link set lo up" "addr add ${FAC_VETH_ADDR[$f]}/24 dev ${FAC_VETH[$f]}"
                             "link set ${FAC_VETH[$f]} up" "tuntap add dev $FAC_TUN mode tun"
                             "link set $FAC_TUN mtu $FAC_TUN_MTU txqueuelen 10000 up"
                             "addr add ${FAC_ADDR[$f]}/32 dev $FAC_TUN")
    for ((g = 0; g <= last; g++)); do
      [ "$g" -eq "$f" ] && continue
      lines+=("route add ${FAC_SUBNET[$g]} dev $FAC_TUN")
      if [ "$FAC_COUNT" -eq 2 ]; then
        peers=(--peer "${FAC_VETH_ADDR[$g]}:$FAC_RELAY_PORT")
      else
        peers+=(--route "${FAC_SUBNET[$g]}=${FAC_VETH_ADDR[$g]}:$FAC_RELAY_PORT")
      fi
    done
    printf -v batch '%s\n' "${lines[@]}"
    ip -n "$ns" -b - <<< "$batch" || return 1
    # Egress shaping on each end: RATE each way, a buffer of 50 ms at that rate.
    tc -n "$ns" qdisc add dev "${FAC_VETH[$f]}" "${tbf[@]}" || return 1
    # shellcheck disable=SC2086  # FAC_RELAY_EXTRA holds several words
    ip netns exec "$ns" "$relay" --tun "$FAC_TUN" --local "${FAC_VETH_ADDR[$f]}:$FAC_RELAY_PORT" \
      "${peers[@]}" --delay-ms "$delay_ms" \
      --ready "$FAC_WORKDIR/relay.$f.ready" ${FAC_RELAY_EXTRA[$f]:-} 2> "$FAC_WORKDIR/relay.$f.log" \
      {FAC_GUARD_FD}>&- &
    FAC_RELAY_PIDS+=($!)
  done
  for ((f = 0; f <= last; f++)); do
    if ! facilities_wait_file "$FAC_WORKDIR/relay.$f.ready" 10; then
      echo "relay of facility $f did not start:" >&2
      cat "$FAC_WORKDIR/relay.$f.log" >&2
      return 1
    fi
  done
  # The path works end to end: facility 0 reaches the last facility's address through TUN, delay and veth.
  if ! ip netns exec "${FAC_NS[0]}" ping -c 1 -W 2 "${FAC_ADDR[$last]}" > /dev/null 2>&1; then
    if command -v ping > /dev/null; then
      echo "facility 0 cannot reach ${FAC_ADDR[$last]} through the relay" >&2
      return 1
    fi
  fi
}

facilities_link() {
  ip -n "${FAC_NS[$1]}" link set "${FAC_VETH[$1]}" "$2"
}

facilities_cap_window() {
  local bytes=$1 ns
  for ns in "${FAC_NS[@]}"; do
    ip netns exec "$ns" sysctl -q -w net.ipv4.tcp_rmem="4096 $bytes $bytes" \
      net.ipv4.tcp_wmem="4096 $bytes $bytes" || return 1
  done
}

# facilities_launch_rank RANK WORLD SIZES HSDP TIMEOUT LOGFILE -- PROG ARGS...
# SIZES is "2,4": rank r belongs to the first facility whose cumulative size exceeds r.
facilities_launch_rank() {
  local rank=$1 world=$2 sizes=$3 hsdp=$4 timeout=$5 log=$6
  shift 7
  local facility=0 offset=0 size
  local -a list
  IFS=, read -r -a list <<< "$sizes"
  for size in "${list[@]}"; do
    [ "$rank" -lt $((offset + size)) ] && break
    offset=$((offset + size))
    facility=$((facility + 1))
  done
  local -a hsdp_env=()
  [ "$hsdp" != 0 ] && hsdp_env=("XFFL_HSDP=$hsdp")
  ip netns exec "${FAC_NS[$facility]}" env RANK="$rank" WORLD_SIZE="$world" \
    LOCAL_RANK=$((rank - offset)) LOCAL_WORLD_SIZE="${list[$facility]}" \
    MASTER_ADDR="${FAC_ADDR[0]}" MASTER_PORT=29500 XFFL_JOB_ID="${FAC_NS[0]}" \
    XFFL_FEDERATED="$sizes" "${hsdp_env[@]}" XFFL_BACKEND=ucx XFFL_TIMEOUT="$timeout" \
    UCX_TLS=tcp UCX_NET_DEVICES="$FAC_TUN" FACILITY_VETH="${FAC_VETH[$facility]}" \
    "$@" > "$log" 2>&1 {FAC_GUARD_FD}>&- &
  FAC_PIDS+=($!)
}

# Kills pids in FAC_PIDS still running: TERM, then KILL those still running after a second.
facilities_kill_ranks() {
  local pid naps=0
  for pid in "${FAC_PIDS[@]}"; do kill -TERM "$pid" 2> /dev/null; done
  for pid in "${FAC_PIDS[@]}"; do
    while ! facilities_finished "$pid" && [ $naps -lt 50 ]; do
      facilities_nap 0.02
      naps=$((naps + 1))
    done
  done
  for pid in "${FAC_PIDS[@]}"; do kill -KILL "$pid" 2> /dev/null; done
  for pid in "${FAC_PIDS[@]}"; do wait "$pid" 2> /dev/null; done
  FAC_PIDS=()
}

# bench/facilities's scripts start with this (see the list at the top).
facilities_bench_up() {
  local relay=$1 rate=$2 delay_ms=$3 binary why
  shift 3
  for binary in "$relay" "$@"; do
    [ -x "$binary" ] || { echo "missing $binary: build netns_delay_relay and the facilities-* targets" >&2; exit 2; }
  done
  if ! why=$(facilities_can_run); then
    echo "cannot run: $why" >&2
    exit 77
  fi
  trap facilities_down EXIT
  trap 'exit 130' INT TERM
  facilities_up "$relay" "$rate" "$delay_ms" || { echo "could not build the facilities" >&2; exit 1; }
}

# Deleting a namespace removes its devices (veths, TUN, bridge); one ip process deletes them all.
facilities_down() {
  facilities_kill_ranks
  local pid batch
  local -a all=("${FAC_NS[@]}")
  [ -n "$FAC_WAN_NS" ] && all+=("$FAC_WAN_NS")
  for pid in "${FAC_RELAY_PIDS[@]}"; do kill -TERM "$pid" 2> /dev/null; done
  for pid in "${FAC_RELAY_PIDS[@]}"; do wait "$pid" 2> /dev/null; done
  FAC_RELAY_PIDS=()
  if [ ${#all[@]} -gt 0 ]; then
    printf -v batch 'netns del %s\n' "${all[@]}"
    ip -force -b - <<< "$batch" 2> /dev/null
  fi
  FAC_NS=()
  FAC_WAN_NS=""
  facilities_guard_done
  if [ -n "$FAC_WORKDIR" ] && [ -z "${FAC_KEEP_WORKDIR:-}" ]; then rm -rf "$FAC_WORKDIR"; fi
}
