#!/usr/bin/env bash
# XFFL_CROSS_FACILITY_BACKEND=ucx under the UCX backend, the path a user takes: every rank averages
# right (check_federated_average) and brings up a second UCX worker for the crossing groups beside the
# main one (its log line at XFFL_LOG_LEVEL=info); with the crossing groups left on the main worker
# (the behaviour before 2026-12-03) the checks pass but the line is missing.
#
#   run_ucx_crossing_under_ucx.sh XFFL_RUN CHECK_FEDERATED_AVERAGE
set -u
run=$1 check=$2
out=$(XFFL_LOG_LEVEL=info XFFL_CROSS_FACILITY_BACKEND=ucx \
      "$run" -n 2 --federated 1,1 --hsdp 1 --backend ucx --timeout 60 --max-time 120 -- "$check" 2>&1)
rc=$?
printf '%s\n' "$out"
[ $rc -eq 0 ] || { echo "FAIL: xffl-run exited with $rc"; exit 1; }
for rank in 0 1; do
  printf '%s\n' "$out" | grep -Eq "rank $rank: [0-9]+ checks passed" || { echo "FAIL: rank $rank's checks"; exit 1; }
done
workers=$(printf '%s\n' "$out" | grep -c "UCX worker of the crossing groups up")
[ "$workers" -eq 2 ] || { echo "FAIL: $workers crossing UCX workers came up, not one per rank"; exit 1; }
echo "PASS: both ranks averaged over a UCX worker of the crossing groups' own"
