#!/usr/bin/env bash
# XFFL_FACILITY_FAULTS=continue across shaped links: three facilities in three namespaces joined through
# a fourth 'wan' namespace's bridge (1 Gbit/s, 10 ms each way through the delay relays), the built-in
# xffl-federation server in facility 0's namespace on facility 0's address. One CTest case per call:
#
#   run_netns_continue.sh RELAY XFFL_RUN XFFL_FEDERATION CHECK_FACILITY SCENARIO [etcd3 FEDERATION_ETCD_CLUSTER]
#
# SCENARIO (netns_continue.py says what each checks): restart, kill_sender, kill_relay, sigstop, cut,
# cut_heal, tamper_heal; heal_time is bench/facilities/heal.sh's. etcd3: the store is a three-member
# etcd cluster, one member in each facility's namespace (instead of xffl-federation); skipped (77)
# when etcd is not installed.
# The harness is tests/facilities/run_continue.py's, driven by netns_continue.py; xffl-run and
# xffl-federation reach it as links to in_facility.sh, which start them in their namespaces.
# Exit 77 (CTest SKIP_RETURN_CODE) when namespaces cannot be created here, with the reason.
# XFFL_NETNS_PYTHON: the Python interpreter (default python3; CMake sets the interpreter's own path).
set -u
here=$(cd "$(dirname "$0")" && pwd)
if [ $# -ne 5 ] && { [ $# -ne 7 ] || [ "$6" != etcd3 ]; }; then
  echo "usage: $0 RELAY XFFL_RUN XFFL_FEDERATION CHECK_FACILITY" \
    "restart|kill_sender|kill_relay|sigstop|cut|cut_heal|tamper_heal|heal_time [etcd3 FEDERATION_ETCD_CLUSTER]" >&2
  exit 2
fi
relay=$1 xffl_run=$2 federation=$3 program=$4 scenario=$5
shift 5
if [ "${1:-}" = etcd3 ] && { ! command -v etcd > /dev/null || ! command -v etcdctl > /dev/null; }; then
  echo "SKIPPED: etcd (etcd, etcdctl) is not installed"
  exit 77
fi
FAC_COUNT=3
# shellcheck source=facilities.sh
. "$here/facilities.sh"

if ! why=$(facilities_can_run); then
  echo "SKIPPED: $why"
  exit 77
fi
trap facilities_down EXIT
trap 'exit 130' INT TERM

# tamper_heal: facility 2's relay flips one payload byte of the 3rd large TCP segment it receives after
# SIGUSR1 (checksum fixed: only the heal's HMAC can notice); the harness arms it just before facility
# 2's job is started again, so the segment is one of the heal's (the model, 256 KiB).
[ "$scenario" = tamper_heal ] && FAC_RELAY_EXTRA[2]="--flip-segment 3 --flip-incoming --flip-after-usr1"
# kill_sender: once armed (SIGUSR2), facility 2's relay takes the first bulk segment out after 60 ms
# without one (a round's all-reduce starting; the rounds are 100 ms apart) and lets nothing in until
# the second SIGUSR2: the harness kills the sender meanwhile, inside that all-reduce.
[ "$scenario" = kill_sender ] && FAC_RELAY_EXTRA[2]="--hold-after-usr2 60"

facilities_up "$relay" 1gbit 10 || { echo "FAIL: could not build the three facilities"; exit 1; }
echo "facilities: ${FAC_NS[*]} through $FAC_WAN_NS; the federation server on ${FAC_ADDR[0]}"

ln -s "$here/in_facility.sh" "$FAC_WORKDIR/xffl-run"
ln -s "$here/in_facility.sh" "$FAC_WORKDIR/xffl-federation"
XFFL_NETNS_FACILITIES="${FAC_NS[*]}" XFFL_NETNS_SERVER_ADDR=${FAC_ADDR[0]} XFFL_NETNS_XFFL_RUN=$xffl_run \
  XFFL_NETNS_FEDERATION=$federation XFFL_NETNS_RELAY_PIDS="${FAC_RELAY_PIDS[*]}" XFFL_NETNS_WORKDIR=$FAC_WORKDIR \
  "${XFFL_NETNS_PYTHON:-python3}" "$here/netns_continue.py" "$FAC_WORKDIR/xffl-run" "$FAC_WORKDIR/xffl-federation" "$program" "$scenario" "$@"
status=$?
for f in 0 1 2; do
  # The relays' counters (printed when they end) and any flip.
  kill -TERM "${FAC_RELAY_PIDS[$f]}" 2> /dev/null
  wait "${FAC_RELAY_PIDS[$f]}" 2> /dev/null
  sed "s/^/[relay $f] /" "$FAC_WORKDIR/relay.$f.log"
done
FAC_RELAY_PIDS=()
exit $status
