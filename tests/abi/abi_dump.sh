#!/usr/bin/env bash
# Writes the ABI of libxffl.so as libabigail XML, the same way for the baseline and for the test:
#   abidw over the public headers (types defined elsewhere are private), internal C++ types dropped
#   (internal-types.suppr), and the two opaque handles, struct xffl_state and struct xffl_group, made
#   declaration-only. Their C++ definitions live in src/ and may change freely; what the ABI promises
#   is only that a function takes an xffl_group_t* and not an xffl_state_t*. (Suppressing the handles
#   in abidiff instead would also hide such a swap; libabigail 2.2 makes one of them opaque by itself,
#   the other not, so the dump does it explicitly for both.)
# Usage: abi_dump.sh LIBRARY HEADERS_DIR OUTPUT
set -euo pipefail

library=$1 headers=$2 output=$3
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
command -v abidw >/dev/null || { echo "abi_dump: abidw not found (Debian package abigail-tools)" >&2; exit 1; }

raw=$output.raw
abidw --headers-dir "$headers" --drop-private-types --suppressions "$here/internal-types.suppr" \
  --no-corpus-path --short-locs --out-file "$raw" "$library"
grep -q "<elf-function-symbols>" "$raw" || { echo "abi_dump: $library exports no functions?" >&2; exit 1; }

# The compilation directory is where the dump was made: noise in a committed file, ignored by abidiff.
sed -E -e "s# comp-dir-path='[^']*'##" -e "s#<class-decl name='(xffl_state|xffl_group)'[^>]* id='(type-id-[0-9]+)'/>#<class-decl name='\\1' is-struct='yes' visibility='default' is-declaration-only='yes' id='\\2'/>#" \
  "$raw" >"$output"
rm -f "$raw"
if grep -E "<class-decl name='(xffl_state|xffl_group)'" "$output" | grep -vq "is-declaration-only='yes'"; then
  echo "abi_dump: a handle struct kept members in the dump; cannot make it opaque:" >&2
  grep -E "<class-decl name='(xffl_state|xffl_group)'" "$output" >&2
  exit 1
fi
