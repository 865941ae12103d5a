#!/usr/bin/env bash
# Installs the built xffl into a temporary prefix and uses it as an outside project would:
#   1. the installed library: SONAME libxffl.so.0, only xffl_* symbols exported (all versioned), and
#      exactly the functions the installed headers declare;
#   2. a C program built with `pkg-config --cflags --libs xffl`, run;
#   3. a CMake project with find_package(xffl 0.1 REQUIRED) linking xffl::xffl, run; 1.0 is refused;
#   4. the prefix moved elsewhere (the original deleted): 2 and 3 again;
#   5. the same files in a Debian multiarch layout (lib/x86_64-linux-gnu) with an xffl.pc written by
#      cmake/XfflPkgConfig.cmake: 2 again.
# Usage: consumer.sh BUILD_DIR SOURCE_DIR WORK_DIR LIBDIR INCLUDEDIR C_COMPILER
set -euo pipefail

# The cmake that configured the build (ctest passes it), else the one on PATH.
cmake() { if [ -n "${CMAKE:-}" ]; then "$CMAKE" "$@"; else command cmake "$@"; fi; }
build_dir=$1 source_dir=$2 work=$3 libdir=$4 includedir=$5 cc=$6
here=$source_dir/tests/consumer

step() { printf '\n== %s\n' "$*"; }
die() { printf 'consumer: FAIL: %s\n' "$*" >&2; exit 1; }

rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix

step "cmake --install into $prefix"
cmake --install "$build_dir" --prefix "$prefix" >"$work/install.log" || { cat "$work/install.log"; die "install"; }
lib=$prefix/$libdir/libxffl.so
[ -L "$lib" ] || die "$lib (the development symlink) is missing"
[ -f "$prefix/$includedir/xffl.h" ] || die "xffl.h not installed in $prefix/$includedir"
[ -f "$prefix/$libdir/pkgconfig/xffl.pc" ] || die "xffl.pc not installed"
[ -f "$prefix/$libdir/cmake/xffl/xfflConfig.cmake" ] || die "xfflConfig.cmake not installed"

step "SONAME and exported symbols of $(readlink -f "$lib")"
soname=$(objdump -p "$lib" | awk '$1 == "SONAME" {print $2}')
echo "SONAME $soname"
[ "$soname" = libxffl.so.0 ] || die "SONAME is '$soname', expected libxffl.so.0"
[ -f "$prefix/$libdir/libxffl.so.0" ] || die "libxffl.so.0 (the runtime link) is not installed"
# nm prints version nodes as absolute symbols ("A XFFL_0.1"); everything else must be an xffl_ function.
nm -D --defined-only "$lib" | awk '$2 != "A" {print $3}' >"$work/exported_versioned.txt"
bad=$(grep -v '^xffl_[a-z0-9_]*@@\?XFFL_[0-9]*\.[0-9]*$' "$work/exported_versioned.txt" || true)
[ -z "$bad" ] || die "exported symbols outside xffl_* or without an XFFL_x.y version node:
$bad"
sed 's/@.*//' "$work/exported_versioned.txt" | sort -u >"$work/exported.txt"
grep -rh '^XFFL_API' "$prefix/$includedir" | sed -n 's/^XFFL_API[^(]*[ *]\(xffl_[a-z0-9_]*\) *(.*/\1/p' |
  sort -u >"$work/declared.txt"
echo "$(wc -l <"$work/exported.txt") exported, $(wc -l <"$work/declared.txt") declared"
missing=$(comm -23 "$work/declared.txt" "$work/exported.txt")
[ -z "$missing" ] || die "declared in the headers but not exported: $missing"
extra=$(comm -13 "$work/declared.txt" "$work/exported.txt")
[ -z "$extra" ] || die "exported but declared in no public header: $extra"

# A library linked against UCX must say so in Requires.private (static links and --cflags need it).
if objdump -p "$lib" | grep -q 'NEEDED *libuc[ps]'; then
  grep -q '^Requires.private:.*ucx' "$prefix/$libdir/pkgconfig/xffl.pc" ||
    die "libxffl.so needs UCX but xffl.pc has no 'Requires.private: ucx'"
  echo "links UCX; xffl.pc says Requires.private: ucx"
fi

# pkg_build NAME PREFIX PCDIR: compiles plan_rank.c with pkg-config's flags and runs two rows.
pkg_build() {
  local name=$1 root=$2 pcdir=$3 flags libpath
  export PKG_CONFIG_PATH=$pcdir
  [ "$(pkg-config --modversion xffl)" = 0.1.0 ] || die "$name: pkg-config --modversion is not 0.1.0"
  flags=$(pkg-config --cflags --libs xffl)
  libpath=$(pkg-config --variable=libdir xffl)
  echo "$name: pkg-config --cflags --libs xffl = $flags"
  # The flags must point into this prefix, not back at the build tree or an older location.
  case "$(readlink -f "$libpath")" in "$(readlink -f "$root")"/*) ;; *) die "$name: libdir $libpath is outside $root" ;; esac
  [ -f "$libpath/libxffl.so" ] || die "$name: libdir $libpath holds no libxffl.so"
  # shellcheck disable=SC2086
  "$cc" -std=c99 -Wall -Wextra -pedantic -Werror "$here/plan_rank.c" -o "$work/$name" $flags \
    -Wl,-rpath,"$libpath" || die "$name: compiling plan_rank.c with pkg-config's flags"
  "$work/$name" 5 && "$work/$name" 7 || die "$name: plan_rank disagrees with DESIGN.md 3.3"
  unset PKG_CONFIG_PATH
}

# cmake_build NAME PREFIX: configures, builds and runs the find_package project.
cmake_build() {
  local name=$1 root=$2
  cmake -S "$here/cmake_project" -B "$work/$name" -DCMAKE_C_COMPILER="$cc" -DCMAKE_PREFIX_PATH="$root" \
    -DCMAKE_BUILD_TYPE=Release >"$work/$name.configure.log" 2>&1 ||
    { cat "$work/$name.configure.log"; die "$name: configuring the find_package(xffl 0.1) project"; }
  grep -q "xffl_DIR:PATH=$root/" "$work/$name/CMakeCache.txt" || die "$name: xffl found outside $root"
  cmake --build "$work/$name" >"$work/$name.build.log" 2>&1 ||
    { cat "$work/$name.build.log"; die "$name: building the find_package project"; }
  "$work/$name/plan_rank" 4 && "$work/$name/plan_rank" 8 || die "$name: plan_rank disagrees with DESIGN.md 3.3"
}

step "C with pkg-config, in place"
pkg_build pkgconfig-in-place "$prefix" "$prefix/$libdir/pkgconfig"
step "CMake find_package(xffl 0.1), in place"
cmake_build cmake-in-place "$prefix"
step "find_package(xffl 1.0) must be refused (SameMajorVersion)"
if cmake -S "$here/cmake_project" -B "$work/cmake-wrong-version" -DCMAKE_PREFIX_PATH="$prefix" \
     -DXFFL_REQUIRED_VERSION=1.0 >"$work/wrong-version.log" 2>&1; then
  die "find_package(xffl 1.0) accepted version 0.1.0"
fi
grep -q "not compatible\|not found\|Could not find" "$work/wrong-version.log" || { cat "$work/wrong-version.log"; die "unexpected failure"; }
echo "refused, as it should be"

step "relocated: prefix moved to $work/moved, original removed"
mv "$prefix" "$work/moved"
pkg_build pkgconfig-moved "$work/moved" "$work/moved/$libdir/pkgconfig"
cmake_build cmake-moved "$work/moved"

step "Debian multiarch layout: lib/x86_64-linux-gnu, xffl.pc written by cmake/XfflPkgConfig.cmake"
multi=$work/multiarch
mkdir -p "$multi/lib/x86_64-linux-gnu/pkgconfig" "$multi/include"
cp -a "$work/moved/$includedir/." "$multi/include/"
cp -a "$work/moved/$libdir"/libxffl.so* "$multi/lib/x86_64-linux-gnu/"
cmake -DSOURCE_DIR="$source_dir" -DOUTPUT="$multi/lib/x86_64-linux-gnu/pkgconfig/xffl.pc" \
  -DLIBDIR=lib/x86_64-linux-gnu -DINCLUDEDIR=include -P "$here/write_pc.cmake"
grep '^prefix=' "$multi/lib/x86_64-linux-gnu/pkgconfig/xffl.pc"
grep -qx 'prefix=${pcfiledir}/../../..' "$multi/lib/x86_64-linux-gnu/pkgconfig/xffl.pc" ||
  die "multiarch xffl.pc: prefix is not \${pcfiledir}/../../.."
pkg_build pkgconfig-multiarch "$multi" "$multi/lib/x86_64-linux-gnu/pkgconfig"

printf '\nconsumer: all checks passed\n'
