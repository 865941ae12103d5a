#!/usr/bin/env bash
# Compares libxffl.so with the committed ABI baseline; fails on anything but a pure addition.
#
# DPDK's devtools/check-abi.sh shape: abidiff's exit status decides, never its report's wording.
# --no-added-syms leaves functions and variables added since the baseline out of the comparison, so
# any remaining change (a removed or changed function, a changed type, another SONAME) makes abidiff
# exit non-zero and the test fails. The status is a bit field (libabigail's abidiff manual):
#   1 error, 2 usage error, 4 ABI change (needs a review), 8 incompatible ABI change.
# Both sides are dumps made by abi_dump.sh (internal C++ types dropped, handles opaque).
# Usage: check_abi.sh BASELINE LIBRARY HEADERS_DIR WORK_DIR
set -uo pipefail

baseline=$1 library=$2 headers=$3 work=$4
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
fail() { printf 'abi: FAIL: %s\n' "$*" >&2; exit 1; }

[ -f "$baseline" ] || fail "no baseline at $baseline (make one with scripts/update-abi-baseline.sh)"
[ -f "$library" ] || fail "no library at $library"
command -v abidiff >/dev/null || fail "abidiff not found (Debian package abigail-tools)"

mkdir -p "$work"
current=$work/current.abi
bash "$here/abi_dump.sh" "$library" "$headers" "$current" || fail "could not dump the ABI of $library"

abidiff_options=(--no-added-syms)
echo "abidiff ${abidiff_options[*]} $baseline $current  (dump of $library)"
abidiff "${abidiff_options[@]}" "$baseline" "$current"
rc=$?
if (( rc == 0 )); then
  echo "abi: OK: nothing removed or changed against the baseline (additions are allowed)"
  exit 0
fi
echo "abidiff exit status: $rc" >&2
(( rc & 3 )) && echo "abi: abidiff error or usage error: a script or environment issue" >&2
(( rc & 4 )) && echo "abi: ABI change: an interface of the baseline was removed or changed (report above)" >&2
(( rc & 8 )) && echo "abi: incompatible ABI change: this breaks every program built against the baseline" >&2
fail "libxffl.so is not ABI-compatible with $baseline; a removal or change needs a new SONAME," \
     "not a new baseline (scripts/update-abi-baseline.sh is for freezing additions at a release)"
