#!/bin/sh
# The demo's training (examples/c/federated_sgd.c) with the exact F32 wire format and with INT8_BLOCK plus
# error feedback: prints both final losses and fails unless INT8_BLOCK's is within 2% of F32's. An
# accuracy check, not a timing one.
#   check_wire_demo_loss.sh XFFL_RUN FEDERATED_SGD [xffl-run layout options...]
set -eu
run=$1
sgd=$2
shift 2

final_loss() {  # final_loss FORMAT FEEDBACK LAYOUT...: the final loss line's number, or fails naming the run
  format=$1 feedback=$2
  shift 2
  out=$(XFFL_WIRE_FORMAT=$format XFFL_ERROR_FEEDBACK=$feedback "$run" "$@" --backend ucx --timeout 60 -- "$sgd" 2>&1) || {
    printf '%s\n' "$out" >&2
    echo "FAIL: federated_sgd with XFFL_WIRE_FORMAT=$format XFFL_ERROR_FEEDBACK=$feedback failed" >&2
    exit 1
  }
  loss=$(printf '%s\n' "$out" | sed -n 's/^.*final loss \([0-9.e+-]*\) .*/\1/p')
  [ -n "$loss" ] || { printf '%s\n' "$out" >&2; echo "FAIL: no final loss line with wire format $format" >&2; exit 1; }
  printf '%s\n' "$out" | grep -q "bit-identical across" || { echo "FAIL: copies differ with wire format $format" >&2; exit 1; }
  echo "$loss"
}

layout="$*"
f32=$(final_loss f32 0 $layout)
int8=$(final_loss int8_block 1 $layout)
echo "final loss with f32: $f32"
echo "final loss with int8_block and error feedback: $int8"
awk -v a="$f32" -v b="$int8" 'BEGIN {
  d = (b - a) / a; if (d < 0) d = -d
  printf "relative difference: %.4f%% (limit 2%%)\n", 100 * d
  exit d <= 0.02 ? 0 : 1
}' || { echo "FAIL: int8_block with error feedback is more than 2% from f32" >&2; exit 1; }
echo "demo loss check passed"
