#!/usr/bin/env bash
# A user's own project in another language, built from an installed xffl by README's words alone:
# installs the build into a temporary prefix, takes the README block marked
# `<!-- consumer-test: LANGUAGE -->` (the ```sh fence right after it), replaces only its
# `prefix=/opt/xffl` line with the temporary prefix, and runs it in an empty directory without
# LD_LIBRARY_PATH (nor XFFL_LIB_DIR, CARGO_TARGET_DIR, RUSTFLAGS). Then checks what it printed, and that
# the program it built finds libxffl through its own run-time path.
#   rust     a new crate depending on the installed `xffl` crate by path (cargo --offline)
#   fortran  a program passing a 2-D array to allreduce and to the federated average, on 4 processes;
#            then the same program through the CMake package (xffl::xffl_fortran), on 2
# Exit 77 (skipped) when the language's tool (cargo, gfortran) is missing; under XFFL_STRICT_CHECKS=1 that
# fails instead.
# Usage: bindings_consumer.sh LANGUAGE BUILD_DIR SOURCE_DIR WORK_DIR
set -euo pipefail

cmake() { if [ -n "${CMAKE:-}" ]; then "$CMAKE" "$@"; else command cmake "$@"; fi; }
language=$1 build_dir=$2 source_dir=$3 work=$4

die() { printf 'bindings_consumer (%s): FAIL: %s\n' "$language" "$*" >&2; exit 1; }
cannot() {
  if [ "${XFFL_STRICT_CHECKS:-0}" = 1 ]; then die "$1 (XFFL_STRICT_CHECKS: the check must run)"; fi
  echo "SKIP: $1"
  exit 77
}

case $language in
  rust)
    PATH=$PATH:$HOME/.cargo/bin
    command -v cargo >/dev/null || cannot "cargo not found"
    expect='rank 5 receives from rank 7'
    expect_lines=1
    program=my-trainer/target/debug/my-trainer ;;
  fortran)
    command -v gfortran >/dev/null || cannot "gfortran not found"
    expect=': federated average 9.0'
    expect_lines=4
    program=average_layers ;;
  *) die "unknown language '$language' (rust or fortran)" ;;
esac
command -v pkg-config >/dev/null || cannot "pkg-config not found"

rm -rf "$work"
mkdir -p "$work/project"
prefix=$work/prefix
cmake --install "$build_dir" --prefix "$prefix" >"$work/install.log" || { cat "$work/install.log"; die "install"; }

# The block, from README.md exactly as a user reads it.
awk -v marker="<!-- consumer-test: $language -->" '
  $0 == marker { found = 1; next }
  found == 1 && /^```sh$/ { found = 2; next }
  found == 2 && /^```$/ { exit }
  found == 2 { print }' "$source_dir/README.md" >"$work/block.sh"
[ -s "$work/block.sh" ] || die "README.md has no \`$language\` block after <!-- consumer-test: $language -->"
grep -q '^prefix=/opt/xffl ' "$work/block.sh" || die "the README block does not start from prefix=/opt/xffl"
sed -i "s|^prefix=/opt/xffl |prefix=$prefix |" "$work/block.sh"
echo "== README block ($language), prefix $prefix"
cat "$work/block.sh"

echo "== running it"
status=0
(cd "$work/project" &&
  env -u LD_LIBRARY_PATH -u XFFL_LIB_DIR -u XFFL_INCLUDE_DIR -u CARGO_TARGET_DIR -u RUSTFLAGS \
      -u PKG_CONFIG_PATH CARGO_NET_OFFLINE=true bash -euo pipefail "$work/block.sh") >"$work/run.log" 2>&1 || status=$?
cat "$work/run.log"
[ "$status" -eq 0 ] || die "the README block failed with status $status (see above)"

got=$(grep -c -- "$expect" "$work/run.log" || true)
[ "$got" -eq "$expect_lines" ] || die "expected $expect_lines line(s) with '$expect', got $got"

# The program finds the installed library by itself: its run-time path points into the prefix, and it
# starts with no loader variable at all.
binary=$work/project/$program
[ -x "$binary" ] || die "$binary was not built"
runpath=$(objdump -p "$binary" | awk '$1 == "RUNPATH" || $1 == "RPATH" {print $2}')
libdir=$(PKG_CONFIG_PATH=$(dirname "$(find "$prefix" -name xffl.pc | head -1)") pkg-config --variable=libdir xffl)
case ":$runpath:" in *":$libdir:"*) ;; *) die "run-time path of $binary is '$runpath', not $libdir" ;; esac
resolved=$(env -u LD_LIBRARY_PATH ldd "$binary" | awk '$1 == "libxffl.so.0" {print $3}')
case "$(readlink -f "$resolved")" in "$(readlink -f "$prefix")"/*) ;; *) die "$binary loads libxffl from '$resolved'" ;; esac
echo "run-time path $runpath; libxffl.so.0 => $resolved"

# Fortran: the same program through the CMake package, as README says (find_package(xffl) gives
# xffl::xffl_fortran), run on 2 ranks: (0 + 1) * (1 + federated rank) averaged over 2 groups = 1.5.
if [ "$language" = fortran ]; then
  mkdir -p "$work/cmake_project"
  cp "$work/project/average_layers.f90" "$work/cmake_project/"
  cat >"$work/cmake_project/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.25)
project(average_layers Fortran)
find_package(xffl 0.1 REQUIRED)
add_executable(average_layers average_layers.f90)
target_link_libraries(average_layers PRIVATE xffl::xffl_fortran)
CMAKE
  cmake -S "$work/cmake_project" -B "$work/cmake_project/build" -DCMAKE_PREFIX_PATH="$prefix" \
    >"$work/cmake.log" 2>&1 && cmake --build "$work/cmake_project/build" >>"$work/cmake.log" 2>&1 ||
    { cat "$work/cmake.log"; die "the CMake project with find_package(xffl) and xffl::xffl_fortran"; }
  env -u LD_LIBRARY_PATH "$prefix/bin/xffl-run" -n 2 --federated 1 --backend ucx -- \
    "$work/cmake_project/build/average_layers" >"$work/cmake_run.log" 2>&1 || { cat "$work/cmake_run.log"; die "CMake-built run"; }
  cat "$work/cmake_run.log"
  [ "$(grep -c ': federated average 1.5' "$work/cmake_run.log")" -eq 2 ] || die "CMake-built program: expected 1.5 on 2 ranks"
fi
echo "bindings_consumer ($language): all checks passed"
