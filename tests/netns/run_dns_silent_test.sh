#!/usr/bin/env bash
# A DNS server that never answers: a job whose store is named by a host name must fail within
# XFFL_TIMEOUT, naming the host and the name lookup, instead of sitting in glibc's resolver for
# timeout x attempts x nameservers (here 5 s x 3 for one query) whatever XFFL_TIMEOUT says.
#
#   run_dns_silent_test.sh XFFL_RUN JOB [LOOKUP_TEST]
#     JOB: netns_facility_job (any program that joins the store); LOOKUP_TEST: unit_bootstrap_name_lookup,
#     whose test_abandoned_lookup needs this DNS server
#
# The script runs itself again inside `unshare --mount --net`: namespaces of its own, gone when it
# ends. There lo is up and one end of a veth pair holds 198.18.0.1/15, with a permanent neighbour entry
# for the nameserver 198.18.0.53: its packets leave without error (no ARP that could fail and report
# the host unreachable) and the other end, which has no address, drops them without answer. (A dummy
# interface would do the same, but its kernel module is missing on some test machines; veth is what the
# other netns tests need anyway.) A resolv.conf naming only that server is bind-mounted over
# /etc/resolv.conf (in this mount namespace only); store.facility.test is in no /etc/hosts. With
# XFFL_TIMEOUT=2 each case must end within 4x the timeout (a bound that only catches the resolver's
# wait, never compared otherwise; the time is printed):
#   launcher     xffl-run --master-addr NAME (no port): xffl-run's own lookup, to draw the port
#   rank 0       xffl-run -n 1 --master-addr NAME --master-port P: the store's host binding NAME
#   rank 1       rank 1 of 2 started as xffl-run starts it (torchrun's variables), its store's host
#                elsewhere: the client's lookup in its rendezvous
#   federation   a facility's job (its store on loopback) whose federation server is named by a name
#   abandoned    a lookup given up at its deadline whose worker ends later (LOOKUP_TEST, with the
#                resolver told to give up after 1 s): it must end and free what it found
# Exit 77 (CTest SKIP_RETURN_CODE) when the namespaces or the mount cannot be made here, with the reason.
set -u

if [ $# -lt 2 ] || [ $# -gt 3 ]; then
  echo "usage: $0 XFFL_RUN JOB [LOOKUP_TEST]" >&2
  exit 2
fi
xffl_run=$1 job=$2 lookup_test=${3:-}
timeout=2
bound=$((4 * timeout))
name=store.facility.test

skip() {
  echo "SKIPPED: $*"
  exit 77
}
fail() {
  echo "FAIL: $*"
  exit 1
}

if [ "${XFFL_DNS_SILENT_INSIDE:-}" != 1 ]; then
  command -v unshare > /dev/null || skip "unshare (util-linux) is not installed"
  command -v ip > /dev/null || skip "iproute2 (ip) is not installed"
  unshare --mount --net true 2> /dev/null ||
    skip "cannot create mount and network namespaces here ('unshare --mount --net' failed: needs root / CAP_SYS_ADMIN)"
  XFFL_DNS_SILENT_INSIDE=1 exec unshare --mount --net "$0" "$@"
fi

grep -Eq '^hosts:.*\bdns\b' /etc/nsswitch.conf 2> /dev/null ||
  skip "/etc/nsswitch.conf does not ask DNS for hosts: no lookup here would wait for a server"
grep -qw "$name" /etc/hosts && skip "/etc/hosts names $name"
ip link set lo up || skip "cannot bring lo up in the new network namespace"
ip link add xdns0 type veth peer name xdns1 2> /dev/null || skip "cannot create a veth pair in the network namespace"
ip addr add 198.18.0.1/15 dev xdns0 && ip link set xdns1 up && ip link set xdns0 up &&
  ip neigh add 198.18.0.53 lladdr 02:00:00:00:00:53 dev xdns0 nud permanent ||
  fail "cannot configure the veth pair"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf 'nameserver 198.18.0.53\noptions timeout:5 attempts:3\n' > "$work/resolv.conf"
mount --bind "$work/resolv.conf" /etc/resolv.conf || skip "cannot bind-mount a resolv.conf in the mount namespace"
echo "silent DNS: nameserver 198.18.0.53 (dropped beyond xdns0), timeout:5 attempts:3; XFFL_TIMEOUT=$timeout s"

# A clean environment for the library: the caller's settings must not change what is tested.
unset MASTER_ADDR MASTER_PORT XFFL_MASTER_ADDR XFFL_MASTER_PORT XFFL_FEDERATION XFFL_FACILITY XFFL_AUTH_TOKEN \
  XFFL_JOB_ID
export XFFL_LOG_LEVEL=warn

# expect CASE EXIT_CODE REGEX -- COMMAND...: COMMAND must end within the bound with EXIT_CODE, having
# printed a line matching REGEX.
expect() {
  local what=$1 code=$2 pattern=$3
  shift 4
  local started ended rc elapsed
  started=$(date +%s%N)
  timeout -k 2 "$bound" "$@" > "$work/out" 2>&1
  rc=$?
  ended=$(date +%s%N)
  elapsed=$(((ended - started) / 1000000))
  sed "s/^/[$what] /" "$work/out"
  echo "$what: exit $rc after $elapsed ms (bound $bound s)"
  [ $rc -ne 124 ] && [ $rc -ne 137 ] ||
    fail "$what: still waiting after $bound s: the lookup was not bounded by XFFL_TIMEOUT"
  [ $rc -eq "$code" ] || fail "$what: exit $rc, expected $code"
  grep -Eq -- "$pattern" "$work/out" || fail "$what: no line matches: $pattern"
}

lookup="the name lookup of '$name' did not finish within $((timeout * 1000)) ms"
port=29500

expect launcher 1 "^xffl-run: --master-addr '$name': $lookup" -- \
  "$xffl_run" -n 1 --master-addr "$name" --timeout "$timeout" -- "$job" check

expect "rank 0" 1 "XFFL_ETIMEOUT: .*rank 0: cannot serve the store at $name:$port: $lookup" -- \
  "$xffl_run" -n 1 --master-addr "$name" --master-port "$port" --timeout "$timeout" -- "$job" check

expect "rank 1" 1 "XFFL_ETIMEOUT: .*rank 1: could not reach the store at $name:$port: $lookup" -- \
  env RANK=1 WORLD_SIZE=2 LOCAL_RANK=1 LOCAL_WORLD_SIZE=2 MASTER_ADDR="$name" MASTER_PORT="$port" \
  XFFL_TIMEOUT="$timeout" "$job" check

federation=federation.facility.test
expect federation 1 "XFFL_ETIMEOUT: .*the name lookup of '$federation' did not finish within $((timeout * 1000)) ms" \
  -- \
  "$xffl_run" -n 1 --federated 1,1 --facility 0 --federation "xffl://$federation:7000" --timeout "$timeout" -- \
  "$job" check

if [ -n "$lookup_test" ]; then
  expect abandoned 0 "OK \] test_abandoned_lookup" -- \
    env SILENT_DNS_NAME="$name" RES_OPTIONS="timeout:1 attempts:1" "$lookup_test"
  grep -q "SKIPPED" "$work/out" && fail "abandoned: the test was skipped"
fi

echo "PASS: every lookup gave up within XFFL_TIMEOUT, naming the host and the lookup"
