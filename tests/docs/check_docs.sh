#!/usr/bin/env bash
# docs.api_reference: builds the target docs in the build folder, from scratch (its stamp removed, so
# Doxygen and check_documented.py run again and their warnings are seen), and checks the result:
#   - the build succeeds and prints no warning and no error (Doxygen's or check_documented.py's);
#   - html/index.html exists, and every function declared XFFL_API in include/xffl/*.h has its entry
#     in the index of functions (html/globals_func.html).
# Exit 77 (skipped) when the target does not exist (no Doxygen), unless strict.
#
# Usage: check_docs.sh CMAKE BUILD_DIR DOCS_BUILD_DIR INCLUDE_DIR HAVE_DOCS_TARGET(0|1) STRICT(0|1)
set -uo pipefail
cmake=$1 build=$2 docs=$3 include=$4 have_target=$5 strict=$6

fail() { echo "docs.api_reference: FAILED: $*" >&2; exit 1; }

if [ "$have_target" != 1 ]; then
  [ "$strict" = 1 ] && fail "doxygen not found, so there is no docs target; XFFL_STRICT_CHECKS (the ci preset) needs it: install the Debian package doxygen (scripts/packages.sh)"
  echo "docs.api_reference skipped: doxygen not found (Debian package doxygen), no docs target"
  exit 77
fi

rm -f "$docs/html.stamp"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
"$cmake" --build "$build" --target docs >"$log" 2>&1
rc=$?
cat "$log"
[ "$rc" -eq 0 ] || fail "cmake --build $build --target docs exited with $rc (the warnings above)"
# Doxygen's format ("FILE:LINE: warning: ...", or "warning: ..." without a place) and check_documented.py's.
if grep -Eq '(^|: )(warning|error): ' "$log"; then
  fail "the docs build printed warnings or errors: $(grep -Ec '(^|: )(warning|error): ' "$log") lines above"
fi

index=$docs/html/index.html
functions=$docs/html/globals_func.html
[ -s "$index" ] || fail "$index is missing or empty"
[ -s "$functions" ] || fail "$functions (the index of functions) is missing or empty"

# Every exported function of the headers: "XFFL_API <type> [*]name(" on one line.
declared=$(sed -nE 's/^XFFL_API[^(]*[ *]([a-z_0-9]+)\(.*/\1/p' "$include"/xffl/*.h | sort -u)
[ -n "$declared" ] || fail "no XFFL_API function found in $include/xffl/*.h"
missing=()
for name in $declared; do
  grep -q "<li>$name()" "$functions" || missing+=("$name")
done
[ ${#missing[@]} -eq 0 ] || fail "not in the API reference's index of functions: ${missing[*]}"
echo "docs.api_reference: $index built with no warning; all $(echo "$declared" | wc -l) functions of include/xffl/*.h listed"
