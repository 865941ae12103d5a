#!/usr/bin/env bash
# The xffl demo, the README's first command. On a fresh Debian bookworm machine it installs what is
# missing, builds what the demo needs (dev preset, build/dev), then:
#   1. plans a cross-facility job before any process starts: 8 ranks in two unequal facilities of
#      2 and 6 ranks, HSDP 2 inside each (xffl-topo --world 8 --federated 2,6 --hsdp 2), as text on
#      stdout and as a picture in out/plan.svg;
#   2. runs that job: examples/c/federated_sgd.c on 8 local processes through xffl-run, each facility
#      training on its own data with HSDP, the facilities averaged with xffl_federated_average, and
#      every copy of every shard checked bit-identical at the end.
# Exit status non-zero if anything fails (or a needed program is not in the tree).
#
# Options (environment): XFFL_SKIP_PACKAGES=1 (do not check Debian packages), XFFL_DEMO_PLAN_ONLY=1
# (step 1 only), XFFL_WIRE_FORMAT=int8_block (or bf16, f16, int4_block) and XFFL_ERROR_FEEDBACK=1 (the
# facilities' averages cross compressed; federated_sgd prints the final loss to compare with f32's;
# tests/multiproc/check_wire_demo_loss.sh runs both).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
build=build/dev
out=out
# shellcheck source=scripts/demo-build.sh
source scripts/demo-build.sh
say() { demo_say "$@"; }
die() { demo_die "$@"; }

demo_configure

# has_target NAME: whether the configured tree defines a target (a part may not be written yet).
target_list=$(cmake --build "$build" --target help 2>/dev/null || true)
has_target() { grep -Eq "(^|[ .:])$1(:|\$| )" <<<"$target_list"; }

has_target xffl-topo || die "the xffl-topo target does not exist in this tree (tools/xffl-topo not built yet?)"
targets=(xffl-topo)
run_job=0
if [ "${XFFL_DEMO_PLAN_ONLY:-0}" != 1 ]; then
  if has_target federated_sgd && has_target xffl-run; then
    targets+=(xffl-run federated_sgd)
    run_job=1
  else
    echo "note: federated_sgd or xffl-run is not in this tree yet: planning only"
  fi
fi
demo_build "${targets[@]}"
topo=$(demo_program "$build" xffl-topo)

job=(--world 8 --federated 2,6 --hsdp 2)
say "the plan: xffl-topo ${job[*]}"
"$topo" "${job[@]}"
mkdir -p "$out"
"$topo" "${job[@]}" --format svg >"$out/plan.svg"
grep -q "<svg" "$out/plan.svg" || die "xffl-topo --format svg wrote no SVG"
echo
echo "picture: $out/plan.svg (open it in a browser)"

if [ "$run_job" = 1 ]; then
  run=$(demo_program "$build" xffl-run)
  sgd=$(demo_program "$build" federated_sgd)
  say "the job: xffl-run -n 8 --federated 2,6 --hsdp 2 --backend ucx -- federated_sgd (wire format ${XFFL_WIRE_FORMAT:-f32}, error feedback ${XFFL_ERROR_FEEDBACK:-0})"
  "$run" -n 8 --federated 2,6 --hsdp 2 --backend ucx -- "$sgd"
fi
say "demo done"
