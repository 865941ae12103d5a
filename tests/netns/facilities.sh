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
#   facilities_cap_window BYTES    caps every TCP connection's window in both namespaces (sysctl
#                                  net.ipv4.tcp_rmem / tcp_wmem maximum), so that one stream cannot fill
#                                  the link: window / RTT is its rate
# FAC_RELAY_EXTRA[f], set before facilities_up, adds arguments to facility f's relay (--flip-segment N).
#
# Everything created lives inside the two namespaces (the veth ends are created there directly), so
# deleting them removes veths and TUNs; relay and rank processes are killed by pid first. Callers
# install `trap facilities_down EXIT`.

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
  local why=""
  if ! ip -n "$probe" link add p0 type veth peer name p1 2> /dev/null; then
    why="cannot create a veth pair inside a namespace"
  elif ! ip netns exec "$probe" tc qdisc add dev p0 root tbf rate 1gbit burst 256kb latency 50ms 2> /dev/null; then
    why="the tbf qdisc is not available"
  elif [ ! -c /dev/net/tun ] || ! ip -n "$probe" tuntap add dev t0 mode tun 2> /dev/null; then
    why="TUN devices are not available (/dev/net/tun)"
  elif [ "$FAC_COUNT" -gt 2 ] && ! ip -n "$probe" link add b0 type bridge 2> /dev/null; then
    why="cannot create a bridge inside a namespace"
  fi
  ip netns del "$probe" 2> /dev/null
  if [ -n "$why" ]; then
    echo "$why"
    return 1
  fi
  return 0
}

# Waits up to $2 seconds for file $1.
facilities_wait_file() {
  local deadline=$((SECONDS + $2))
  while [ ! -e "$1" ]; do
    [ $SECONDS -ge $deadline ] && return 1
    sleep 0.02
  done
}

# The wan namespace's bridge, and facility f's veth into it (the bridge's end shaped too, so that
# traffic toward f crosses RATE once more: each direction is shaped at both ends, as with two).
facilities_wan_up() {
  local rate=$1 f
  FAC_WAN_NS="xffl-wan-$2"
  ip netns add "$FAC_WAN_NS" || return 1
  ip -n "$FAC_WAN_NS" link add xbridge type bridge || return 1
  ip -n "$FAC_WAN_NS" link set xbridge up || return 1
  for f in $(seq 0 $((FAC_COUNT - 1))); do
    ip link add "${FAC_VETH[$f]}" netns "${FAC_NS[$f]}" mtu $((FAC_TUN_MTU + 100)) type veth \
      peer name "xwan$f" netns "$FAC_WAN_NS" mtu $((FAC_TUN_MTU + 100)) || return 1
    ip -n "$FAC_WAN_NS" link set "xwan$f" master xbridge up || return 1
    ip netns exec "$FAC_WAN_NS" tc qdisc add dev "xwan$f" root tbf rate "$rate" burst 256kb latency 50ms || return 1
  done
}

facilities_up() {
  local relay=$1 rate=$2 delay_ms=$3
  local suffix
  suffix=$(od -An -N4 -tx4 /dev/urandom | tr -d ' ')
  FAC_WORKDIR=$(mktemp -d "${TMPDIR:-/tmp}/xffl-netns.XXXXXX")
  FAC_NS=()
  local f g last=$((FAC_COUNT - 1))
  for f in $(seq 0 $last); do
    FAC_NS+=("xffl-fac$f-$suffix")
    ip netns add "${FAC_NS[$f]}" || return 1
    ip -n "${FAC_NS[$f]}" link set lo up || return 1
  done
  if [ "$FAC_COUNT" -eq 2 ]; then
    ip link add "${FAC_VETH[0]}" netns "${FAC_NS[0]}" mtu $((FAC_TUN_MTU + 100)) type veth \
      peer name "${FAC_VETH[1]}" netns "${FAC_NS[1]}" mtu $((FAC_TUN_MTU + 100)) || return 1
  else
    facilities_wan_up "$rate" "$suffix" || return 1
  fi
  for f in $(seq 0 $last); do
    local ns=${FAC_NS[$f]}
    local -a peers=()
    ip -n "$ns" addr add "${FAC_VETH_ADDR[$f]}/24" dev "${FAC_VETH[$f]}" || return 1
    ip -n "$ns" link set "${FAC_VETH[$f]}" up || return 1
    # Egress shaping on each end: RATE each way, a buffer of 50 ms at that rate.
    ip netns exec "$ns" tc qdisc add dev "${FAC_VETH[$f]}" root tbf rate "$rate" burst 256kb latency 50ms || return 1
    ip -n "$ns" tuntap add dev "$FAC_TUN" mode tun || return 1
    ip -n "$ns" link set "$FAC_TUN" mtu "$FAC_TUN_MTU" txqueuelen 10000 up || return 1
    ip -n "$ns" addr add "${FAC_ADDR[$f]}/32" dev "$FAC_TUN" || return 1
    for g in $(seq 0 $last); do
      [ "$g" -eq "$f" ] && continue
      ip -n "$ns" route add "${FAC_SUBNET[$g]}" dev "$FAC_TUN" || return 1
      if [ "$FAC_COUNT" -eq 2 ]; then
        peers=(--peer "${FAC_VETH_ADDR[$g]}:$FAC_RELAY_PORT")
      else
        peers+=(--route "${FAC_SUBNET[$g]}=${FAC_VETH_ADDR[$g]}:$FAC_RELAY_PORT")
      fi
    done
    # shellcheck disable=SC2086  # FAC_RELAY_EXTRA holds several words
    ip netns exec "$ns" "$relay" --tun "$FAC_TUN" --local "${FAC_VETH_ADDR[$f]}:$FAC_RELAY_PORT" \
      "${peers[@]}" --delay-ms "$delay_ms" \
      --ready "$FAC_WORKDIR/relay.$f.ready" ${FAC_RELAY_EXTRA[$f]:-} 2> "$FAC_WORKDIR/relay.$f.log" &
    FAC_RELAY_PIDS+=($!)
  done
  for f in $(seq 0 $last); do
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
    ip netns exec "$ns" sysctl -q -w net.ipv4.tcp_rmem="4096 $bytes $bytes" || return 1
    ip netns exec "$ns" sysctl -q -w net.ipv4.tcp_wmem="4096 $bytes $bytes" || return 1
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
    "$@" > "$log" 2>&1 &
  FAC_PIDS+=($!)
}

# Kills pids in FAC_PIDS still running: TERM, then KILL after a second.
facilities_kill_ranks() {
  local pid
  for pid in "${FAC_PIDS[@]}"; do kill -TERM "$pid" 2> /dev/null; done
  sleep 0.2
  for pid in "${FAC_PIDS[@]}"; do kill -0 "$pid" 2> /dev/null && sleep 1 && break; done
  for pid in "${FAC_PIDS[@]}"; do kill -KILL "$pid" 2> /dev/null; done
  for pid in "${FAC_PIDS[@]}"; do wait "$pid" 2> /dev/null; done
  FAC_PIDS=()
}

facilities_down() {
  facilities_kill_ranks
  local pid ns
  for pid in "${FAC_RELAY_PIDS[@]}"; do kill -TERM "$pid" 2> /dev/null; done
  for pid in "${FAC_RELAY_PIDS[@]}"; do wait "$pid" 2> /dev/null; done
  FAC_RELAY_PIDS=()
  for ns in "${FAC_NS[@]}" $FAC_WAN_NS; do ip netns del "$ns" 2> /dev/null; done
  FAC_NS=()
  FAC_WAN_NS=""
  if [ -n "$FAC_WORKDIR" ] && [ -z "${FAC_KEEP_WORKDIR:-}" ]; then rm -rf "$FAC_WORKDIR"; fi
}
