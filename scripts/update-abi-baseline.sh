#!/usr/bin/env bash
# Regenerates tests/abi/libxffl.so.0.abi, the ABI baseline the abi test compares libxffl.so with.
#
# Run it on purpose, when an ABI is frozen (a release), never to silence the abi test: the test
# already accepts additions (abidiff --no-added-syms); a removal or change means a new SONAME (major version), not a new baseline.
# Builds the dev preset (RelWithDebInfo: abidw needs -g), dumps the ABI with tests/abi/abi_dump.sh,
# shows what changed against the old baseline, and writes the new one. Commit it with that summary.
#
# Usage: scripts/update-abi-baseline.sh [BUILD_DIR]   (default build/dev, configured if needed)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build/dev}
baseline=$root/tests/abi/libxffl.so.0.abi

cd "$root"
if [ ! -f "$build/CMakeCache.txt" ]; then
  if [ "$build" = "$root/build/dev" ]; then
    cmake --preset dev
  else
    cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo
  fi
fi
cmake --build "$build" --target xffl -j2
library=$(find "$build/src" -maxdepth 1 -name 'libxffl.so.*.*.*' | head -1)
[ -n "$library" ] || { echo "update-abi-baseline: no libxffl.so.X.Y.Z under $build/src" >&2; exit 1; }

new=$(mktemp)
trap 'rm -f "$new"' EXIT
bash "$root/tests/abi/abi_dump.sh" "$library" "$root/include" "$new"
if [ -f "$baseline" ]; then
  echo "== changes against the current baseline:"
  abidiff "$baseline" "$new" || true
fi
cp "$new" "$baseline"
chmod 644 "$baseline"
echo "== wrote $baseline from $library"
echo "   commit it: git add tests/abi/libxffl.so.0.abi && git commit -m 'ABI baseline: <what was frozen>'"
