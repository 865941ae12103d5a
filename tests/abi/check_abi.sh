#!/usr/bin/env bash
# Compares libxffl.so with the committed ABI baseline and fails on anything but a pure addition.
#
# abidiff's exit status is a bit field: 1 error, 2 usage error, 4 ABI change, 8 incompatible change.
# 0 passes. 4 alone passes only when the report lists additions and nothing else: every summary says
# "0 Removed, 0 Changed" and no [D] (deleted) or [C] (changed) entry appears. Anything else fails,
# and the report is printed so the failure names what changed.
#
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
echo "abidiff $baseline $current  (dump of $library)"
report=$(abidiff "$baseline" "$current" 2>&1)
rc=$?
printf '%s\n' "$report"
echo "abidiff exit status: $rc"

(( rc & 1 )) && fail "abidiff reported an error"
(( rc & 2 )) && fail "abidiff usage error"
(( rc & 8 )) && fail "incompatible ABI change (see the report above)"
if (( rc == 0 )); then
  echo "abi: OK: no ABI change against the baseline"
  exit 0
fi

# rc == 4: some change; accept it only if every change is an addition.
summaries=$(printf '%s\n' "$report" | grep -E '^(Functions|Variables|Function symbols|Variable symbols) changes summary:')
[ -n "$summaries" ] || fail "abidiff reported a change but no change summary (see the report above)"
bad_summary=$(printf '%s\n' "$summaries" | grep -Ev ': 0 Removed(,| ).*' ; printf '%s\n' "$summaries" | grep -E '[1-9][0-9]* Changed')
[ -z "$bad_summary" ] || fail "removed or changed interfaces:
$bad_summary"
if printf '%s\n' "$report" | grep -Eq '^ *\[(D|C)\] '; then
  fail "the report lists deleted [D] or changed [C] interfaces (see above)"
fi
if printf '%s\n' "$report" | grep -Eiq 'SONAME changed|architecture changed'; then
  fail "SONAME or architecture changed"
fi
added=$(printf '%s\n' "$report" | grep -Ec '^ *\[A\] ')
(( added > 0 )) || fail "abidiff reported an ABI change that is not an addition (see the report above)"
echo "abi: OK: $added addition(s), nothing removed or changed"
echo "abi: run scripts/update-abi-baseline.sh when a release freezes these additions"
