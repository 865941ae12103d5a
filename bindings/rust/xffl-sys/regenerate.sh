#!/bin/sh
# Regenerate src/bindings.rs from the public C header include/xffl.h.
#
#   regenerate.sh            rewrite src/bindings.rs (commit the result with the header change)
#   regenerate.sh --check    regenerate into a temporary file and fail on any difference
#
# Needs the bindgen CLI (Debian package `bindgen`, 0.60) and rustfmt. Exit status: 0 fresh (or rewritten),
# 1 the committed file differs, 77 the check cannot run here (a tool is missing, or the installed bindgen
# is not the one that made the committed file; CTest reports that as skipped). In CI (CI=true, as CI
# services set it, or XFFL_STRICT_CHECKS=1, which the ci preset sets) a check that cannot run fails with
# status 1 instead: there the check must really happen.
# Statuses and every other enum become newtypes over the C integer, so a value this version does not
# know (a status added by a newer libxffl) is an ordinary value, never undefined behaviour.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
include_dir=${XFFL_INCLUDE_DIR:-$here/../../../include}
committed=$here/src/bindings.rs
bindgen=${BINDGEN:-bindgen}
rustfmt=${RUSTFMT:-rustfmt}

# cannot_check REASON: skip outside CI, fail in CI.
cannot_check() {
  if [ "${CI:-}" = true ] || [ "${XFFL_STRICT_CHECKS:-0}" = 1 ]; then
    echo "FAIL: $1 (in CI the freshness check must run: install it, or regenerate with it and commit)" >&2
    exit 1
  fi
  echo "SKIP: $1" >&2
  exit 77
}

for tool in "$bindgen" "$rustfmt"; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    cannot_check "$tool not found; cannot regenerate the xffl-sys bindings"
  fi
done

# Another bindgen release formats and orders its output differently; comparing against it would fail
# on a header that did not change. The check compares like with like, and says so when it cannot.
made_by=$(sed -n '1s/.*rust-bindgen \([0-9.]*\).*/\1/p' "$committed" 2>/dev/null || true)
installed=$("$bindgen" --version 2>/dev/null | sed -n 's/^bindgen \([0-9.]*\).*/\1/p')
if [ "${1:-}" = "--check" ] && [ -n "$made_by" ] && [ "$made_by" != "$installed" ]; then
  cannot_check "src/bindings.rs was made by bindgen $made_by, this is bindgen ${installed:-unknown}"
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

# rustfmt runs separately with fixed settings, so the output does not depend on a rustfmt.toml that
# happens to sit in a parent directory.
printf 'edition = "2021"\nmax_width = 120\n' >"$tmp/rustfmt.toml"

"$bindgen" "$include_dir/xffl.h" \
  --size_t-is-usize \
  --allowlist-function 'xffl_.*' \
  --allowlist-type 'xffl_.*' \
  --allowlist-var 'XFFL_.*' \
  --newtype-enum 'xffl_.*' \
  --no-layout-tests \
  --no-rustfmt-bindings \
  --output "$tmp/raw.rs" \
  -- -I"$include_dir" -std=c99
"$rustfmt" --config-path "$tmp/rustfmt.toml" <"$tmp/raw.rs" >"$tmp/bindings.rs"

if [ "${1:-}" = "--check" ]; then
  if diff -u "$committed" "$tmp/bindings.rs"; then
    echo "xffl-sys bindings are up to date with $include_dir/xffl.h"
    exit 0
  fi
  echo "FAIL: xffl-sys/src/bindings.rs differs from what bindgen makes of the header; run $0 and commit" >&2
  exit 1
fi
cp "$tmp/bindings.rs" "$committed"
echo "wrote $committed"
