#!/usr/bin/env bash
# Every test of xffl, from a fresh Debian bookworm machine: the README's second command.
#
#   1. installs the Debian packages the build and the tests need (only those missing; apt-get update
#      only when something is missing);
#   2. the ci preset: RelWithDebInfo, warnings as errors, built with Ninja (so are asan and tsan; fuzz
#      uses Makefiles, so both generators build every time); checks that would skip on a developer's machine
#      (bindgen freshness) fail instead (XFFL_STRICT_CHECKS). It runs every test that the asan stage
#      does not: the static checks, the bindings, the tests registered only in unsanitized builds, and
#      the long multi-process tests labelled sanitizer_duplicate (the facility jobs, the network
#      namespaces, the etcd clusters), which so run on the optimized library. The others (unit, api,
#      and most multi-process tests) run once, under the sanitizers: the same assertions, plus
#      ASan's and UBSan's. Run twice, they made the default run miss its 15 minutes on two cores.
#      Without an asan stage in XFFL_PRESETS, or with XFFL_CI_ALL=1, the ci stage runs every test;
#      `ctest --preset ci` always does;
#   3. the asan preset: the whole suite under AddressSanitizer + UndefinedBehaviorSanitizer (-O1)
#      (leaks included), less what runs no code under the sanitizer (labels abi, docs, headertest, static:
#      static checks) or no code that a smaller test does not run under it already (label
#      sanitizer_duplicate; each such test says which one);
#   4. the tsan preset: ThreadSanitizer over the labels unit* (threads as ranks) and threads (the
#      multi-process tests with more than one thread in xffl inside a process: nonblocking requests,
#      two threads on one state, the federation server). UCX's memory hooks are off there
#      (UCX_MEM_MALLOC_HOOKS=no, UCX_MEM_MALLOC_RELOC=no, UCX_MEM_MMAP_HOOK_MODE=none in the test
#      preset): libucm patches the process's malloc/mmap/madvise, and TSan's own interceptors crash
#      inside those hooks. Its build preset builds only the programs of those tests (its "targets");
#      after its build, scripts/check-test-programs.py fails the stage if a selected test names a
#      program of the build that was not built (in every stage: if a test's executable is missing);
#   5. the fuzz preset: clang 14 + libFuzzer, a short bounded run of every fuzzer (label fuzz).
# Every stage runs even if an earlier one failed; the exit status is non-zero if any failed.
# New test folders (tests/*/CMakeLists.txt, bindings) are picked up by CMake: nothing to edit here.
#
# Options (environment):
#   XFFL_PRESETS="ci asan tsan fuzz"   which stages to run, in order
#   XFFL_CLEAN=1                  remove build/<preset> first (a from-scratch run)
#   XFFL_CTEST_ARGS="-L api"      extra ctest arguments (e.g. a label) for every stage
#   XFFL_CI_ALL=1                 the ci stage runs every test, also those the asan stage runs
#   XFFL_SKIP_PACKAGES=1          do not check or install Debian packages
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

presets=${XFFL_PRESETS:-ci asan tsan fuzz}
ctest_args=${XFFL_CTEST_ARGS:-}
jobs=2  # the machines this runs on have two cores

# shellcheck source=scripts/packages.sh
source "$root/scripts/packages.sh"

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
seconds_since() { echo $(( $(date +%s) - $1 )); }

# configure_preset NAME: configures build/NAME (log: build/NAME.configure.log); fails if it cannot.
configure_preset() {
  local name=$1 dir=build/$1
  mkdir -p build
  # CMake's file API: the targets and their files, for check-test-programs.py after the build.
  local query=$dir/.cmake/api/v1/query
  mkdir -p "$query" && touch "$query/codemodel-v2"
  cmake --preset "$name" >"build/$name.configure.log" 2>&1 && return 0
  # A build folder made by another generator (the ci preset moved from Makefiles to Ninja) cannot be
  # reconfigured in place: that one starts afresh.
  grep -q "Does not match the generator used previously" "build/$name.configure.log" || return 1
  echo "$dir was made by another CMake generator: removing it"
  rm -rf "$dir"
  mkdir -p "$query" && touch "$query/codemodel-v2"
  cmake --preset "$name" >"build/$name.configure.log" 2>&1
}

# left_to_asan: prints the ctest -E expression of the tests that the asan stage of this run selects
# (configuring build/asan for that, as its own stage would); prints nothing when the ci stage keeps
# every test (no asan stage in this run, XFFL_CI_ALL=1, or asan's selection cannot be read).
left_to_asan() {
  [[ " $presets " == *" asan "* ]] && [ "${XFFL_CI_ALL:-0}" != 1 ] || return 0
  configure_preset asan >&2 || return 0
  # shellcheck disable=SC2086
  ctest --preset asan $ctest_args --show-only=json-v1 >build/asan/tests.json 2>/dev/null || return 0
  python3 scripts/test-names.py build/asan/tests.json || true
}

# run_preset NAME: configure, build and test one preset; the build log stays in build/NAME/build.log.
declare -A verdict summary
ci_split=0  # 1 once the ci stage has left tests to the asan stage
run_preset() {
  local name=$1 dir=build/$1 start rc
  start=$(date +%s)
  rm -f "$dir/ctest.log"  # the log of this run's tests only (the split's check reads it)
  say "$name: configure"
  [ "${XFFL_CLEAN:-0}" = 1 ] && rm -rf "$dir"
  if ! configure_preset "$name"; then
    cat "build/$name.configure.log"
    verdict[$name]="FAILED (configure)"
    return 1
  fi

  say "$name: build (log: $dir/build.log)"
  if ! cmake --build --preset "$name" -j "$jobs" >"$dir/build.log" 2>&1; then
    grep -E "error|Error" "$dir/build.log" | head -40
    echo "..."
    tail -40 "$dir/build.log"
    verdict[$name]="FAILED (build)"
    return 1
  fi
  echo "built in $(seconds_since "$start") s"
  # A build preset may build only what its tests run (tsan, fuzz): every program that a selected test
  # names must then be there, or the stage fails here (a test's own missing executable is ctest's
  # "Not Run", but a program passed as an argument could make a test fail in other words, or skip).
  # A preset that builds all is checked for the tests' own executables only (see the script).
  # shellcheck disable=SC2086
  if ! ctest --preset "$name" $ctest_args --show-only=json-v1 >"$dir/tests.json" ||
     ! python3 scripts/check-test-programs.py "$dir" "$dir/tests.json"; then
    verdict[$name]="FAILED (a test's program was not built)"
    return 1
  fi

  # The ci stage leaves to the asan stage the tests that it runs (see the header).
  local -a split=()     # the ci stage's share when the asan stage takes its own
  local -a parallel=()  # more tests at a time than the preset's two
  if [ "$name" = ci ]; then
    local asan_runs
    asan_runs=$(left_to_asan)
    [ -n "$asan_runs" ] && split=(-E "$asan_runs") && ci_split=1
  fi
  # Three tests at a time where they wait more than they compute (etcd elections and leases, facility
  # jobs that stop and start, shaped links, timeouts). Measured here: the ci stage's share, 104 tests in
  # 169 s at two with 40% of the two cores idle, 139 s at three; the asan stage 19% idle at two, 5% at
  # three (338 -> 305 s); tsan 149 -> 130 s. Not the ci stage running every test (its CPU-bound unit
  # tests), nor the fuzzers (each keeps a core busy for its whole run).
  if [ ${#split[@]} -gt 0 ] || [ "$name" = asan ] || [ "$name" = tsan ]; then
    parallel=(-j 3)
  fi

  say "$name: test"
  if [ ${#split[@]} -gt 0 ]; then
    echo "the tests that the asan stage runs are left to it (XFFL_CI_ALL=1 runs them here too)"
  fi
  # shellcheck disable=SC2086
  ctest --preset "$name" $ctest_args "${split[@]}" "${parallel[@]}" 2>&1 | tee "$dir/ctest.log"
  rc=${PIPESTATUS[0]}
  summary[$name]=$(grep -E "tests passed|tests failed out of" "$dir/ctest.log" | tail -1)
  if [ "$rc" -ne 0 ]; then
    verdict[$name]="FAILED (tests) in $(seconds_since "$start") s"
    return 1
  fi
  verdict[$name]="passed in $(seconds_since "$start") s"
}

overall_start=$(date +%s)
status=0

if [ "${XFFL_SKIP_PACKAGES:-0}" != 1 ]; then
  say "Debian packages"
  xffl_install_packages || exit 1
fi
command -v cmake >/dev/null || { echo "test-all: cmake not found" >&2; exit 1; }
# Compiler cache for C and C++ (not CUDA or Fortran), keyed on paths relative to the repository and
# not on the build folder (debug info may then name the folder of the first build), so that a fresh
# clone elsewhere reuses it. The caller's own launcher settings win.
if command -v ccache >/dev/null; then
  export CMAKE_C_COMPILER_LAUNCHER=${CMAKE_C_COMPILER_LAUNCHER:-ccache}
  export CMAKE_CXX_COMPILER_LAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER:-ccache}
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$root}
  export CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
fi

for preset in $presets; do
  run_preset "$preset" || status=1
done

# Every test at least once: each test of the ci stage's whole selection ran in the ci or the asan stage
# (it did not if the asan stage stopped before its tests).
if [ "$ci_split" = 1 ] &&
   ! not_run=$(python3 scripts/test-names.py build/ci/tests.json --not-in build/ci/ctest.log build/asan/ctest.log); then
  verdict[ci]="FAILED (left to the asan stage, these tests ran in neither: $(printf "%s" "$not_run" | tr "\n" " " | head -c 600))"
  status=1
fi

say "summary ($(seconds_since "$overall_start") s in all)"
for preset in $presets; do
  printf '%-6s %s\n' "$preset" "${verdict[$preset]:-not run}"
  [ -n "${summary[$preset]:-}" ] && printf '       %s\n' "${summary[$preset]}"
  if [ -f "build/$preset/ctest.log" ] && grep -q "The following tests FAILED" "build/$preset/ctest.log"; then
    sed -n '/The following tests FAILED/,/^Errors while running/p' "build/$preset/ctest.log" | sed 's/^/       /'
  fi
done
exit $status
