#!/bin/bash
# Runs PROGRAM ARGS... as 4 ranks under Open MPI's mpirun, with no MASTER_ADDR or MASTER_PORT in the
# environment: xffl_state_from_env must find rank 0's store through PMIx. Loopback only.
#   mpirun.sh RANKS TIMEOUT_SECONDS PROGRAM ARGS...
# Exit 77 (skipped) only when mpirun is not installed.
set -euo pipefail
ranks=$1 xffl_timeout=$2
shift 2
command -v mpirun >/dev/null || { echo "SKIP: mpirun (Debian openmpi-bin) is not installed"; exit 77; }
root_flag=()
[ "$(id -u)" -eq 0 ] && root_flag=(--allow-run-as-root)  # mpirun refuses root otherwise (containers, CI)
# Every wait inside is bounded by XFFL_TIMEOUT; the outer timeout only catches a launcher that hangs.
exec timeout -k 5 50 env -u MASTER_ADDR -u MASTER_PORT -u XFFL_MASTER_ADDR -u XFFL_MASTER_PORT \
  XFFL_TIMEOUT="$xffl_timeout" XFFL_BACKEND=ucx \
  mpirun "${root_flag[@]}" --oversubscribe -np "$ranks" \
  --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo "$@"
