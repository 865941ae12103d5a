#!/bin/sh
# run_example.sh XFFL_RUN EXAMPLE NPROC [xffl-run options...]
# Launches the Rust example on NPROC ranks with xffl-run and passes only when the launch exits 0 and
# every rank reports a correct federated average (CTest's PASS_REGULAR_EXPRESSION would ignore the
# exit status, and one matching rank would be enough for it).
set -u
xffl_run=$1 example=$2 nproc=$3
shift 3
out=$(mktemp)
trap 'rm -f "$out"' EXIT INT TERM
"$xffl_run" -n "$nproc" "$@" -- "$example" >"$out" 2>&1
status=$?
cat "$out"
correct=$(grep -c "federated average of [0-9]* values over [0-9]* groups is correct" "$out")
if [ "$status" -ne 0 ] || [ "$correct" -ne "$nproc" ]; then
  echo "FAIL: xffl-run exited $status; $correct of $nproc ranks reported a correct average" >&2
  exit 1
fi
echo "PASS: $nproc ranks, every average correct"
