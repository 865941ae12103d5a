#!/bin/bash
# A one-node SLURM cluster of the test's own (slurmctld and slurmd of Debian's slurm-wlm, auth/none,
# every file in a temporary folder, free ports, loopback), one srun job in it, and the cluster removed
# in every path. The node is "localhost" at 127.0.0.1, so the plain launch's first host of the node
# list is loopback too.
#   slurm.sh SRUN_ARGS -- PROGRAM ARGS...       e.g. slurm.sh -n 4 --mpi=pmix -- check_launcher 4 pmix
# The job runs with no MASTER_ADDR or MASTER_PORT in its environment. Exit 77 (skipped) when SLURM is
# not installed, when not root (slurmd must be), or when the daemons cannot start here (their log is
# shown); any failure of the job itself fails.
set -euo pipefail
srun_args=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do srun_args+=("$1"); shift; done
[ $# -gt 1 ] || { echo "usage: slurm.sh SRUN_ARGS -- PROGRAM ARGS..." >&2; exit 2; }
shift

for tool in slurmctld slurmd srun sinfo python3; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed (Debian slurm-wlm: slurmctld slurmd slurm-client)"; exit 77; }
done
[ "$(id -u)" -eq 0 ] || { echo "SKIP: slurmd must run as root to start tasks, and this is uid $(id -u)"; exit 77; }
if [[ " ${srun_args[*]} " == *" --mpi=pmix "* ]] && ! ls /usr/lib/*/slurm*/mpi_pmix*.so >/dev/null 2>&1 \
   && ! ls /usr/lib/slurm*/mpi_pmix*.so >/dev/null 2>&1; then
  echo "SKIP: this SLURM has no mpi/pmix plugin (mpi_pmix.so)"
  exit 77
fi

dir=$(mktemp -d /tmp/xffl-slurm.XXXXXX)
pids=()
cleanup() {
  local pid
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  done
  rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

show_logs() {
  local log
  for log in "$dir"/log/*; do echo "--- $log"; tail -n 20 "$log"; done
}

mkdir -p "$dir/state" "$dir/spool" "$dir/log" "$dir/tmp"
read -r ctld_port slurmd_port < <(python3 -c '
import random, socket
# Below the ephemeral range (as xffl-run draws MASTER_PORT): no outgoing connection takes them first.
low = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
sockets = []
while len(sockets) < 2:
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", random.randrange(20000, low) if low > 20064 else 0))
        sockets.append(s)
    except OSError:
        s.close()
print(*[s.getsockname()[1] for s in sockets])')
first_job_id=$((1000 + (RANDOM * 32768 + RANDOM) % 60000000))
cat >"$dir/slurm.conf" <<CONF
ClusterName=xffltest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/none
CredType=cred/none
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
# The node declares 8 CPUs on any host (a 2-core box too): config_overrides trusts this file.
SlurmdParameters=config_overrides
ReturnToService=2
# Apart from any other test cluster on this host (another build's tests): SLURM's PMIx plugin names
# its folders in TmpFS by job id, and every fresh cluster would start at job 1.
TmpFS=$dir/tmp
FirstJobId=$first_job_id
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
NodeName=localhost NodeAddr=127.0.0.1 CPUs=8 State=UNKNOWN
PartitionName=xffl Nodes=localhost Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
export SLURM_CONF=$dir/slurm.conf

slurmctld -D -f "$SLURM_CONF" >"$dir/log/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -N localhost -f "$SLURM_CONF" >"$dir/log/slurmd.out" 2>&1 &
pids+=($!)

# The node registers within a second or two; 30 s bounds a loaded machine.
state=""
for _ in $(seq 150); do
  state=$(sinfo -h -n localhost -o %T 2>/dev/null || true)
  [ "$state" = "idle" ] && break
  for pid in "${pids[@]}"; do
    kill -0 "$pid" 2>/dev/null || { echo "SKIP: a SLURM daemon exited at start here"; show_logs; exit 77; }
  done
  sleep 0.2
done
if [ "$state" != "idle" ]; then
  echo "SKIP: the SLURM node did not become idle within 30 s (state '${state:-unknown}')"
  show_logs
  exit 77
fi

# Every wait of xffl is bounded by XFFL_TIMEOUT; the outer timeout only catches a launcher that hangs.
status=0
timeout -k 5 50 env -u MASTER_ADDR -u MASTER_PORT -u XFFL_MASTER_ADDR -u XFFL_MASTER_PORT \
  XFFL_TIMEOUT="${XFFL_TIMEOUT:-30}" XFFL_BACKEND=ucx \
  srun "${srun_args[@]}" "$@" || status=$?
if [ "$status" -ne 0 ]; then
  echo "FAIL: srun ${srun_args[*]} $* exited with $status"
  show_logs
fi
exit "$status"
