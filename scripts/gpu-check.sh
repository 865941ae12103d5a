#!/usr/bin/env bash
# The one prepared run for a machine with a GPU (e.g. one H200): builds xffl with CUDA and NCCL in its
# own build directory, runs the gpu tests (worlds of 1, 2, 4 and 8 ranks where that many devices exist),
# the NCCL unit tests, XFFL_FACILITY_FAULTS=continue on device memory (three facility jobs and the
# built-in federation store), the C API case with XFFL_ENQUEUE_ONLY=1, the one-GPU cases under
# compute-sanitizer's memcheck, and the GPU benchmark, and writes one summary, $OUT/summary.txt (or
# ./gpu-results/summary.txt), with the details beside it. Budget: under 10 minutes on one H200 with 16
# cores: every step is bounded by `timeout`, and memcheck takes only what the other bounds leave of 9.5
# minutes. On one H200 (2026-12-04) the whole run took 117-129 s, memcheck included.
#   scripts/gpu-check.sh            (from the repository root)
#
# Prerequisites: CMake >= 3.25, pkg-config, a C++17 compiler, OpenSSL's headers (libssl-dev), and CUDA
# with NCCL (under the toolkit, CUDAToolkit_ROOT or /usr/local/cuda, in the system's library folders, or
# PyTorch's nvidia-nccl wheel). Debian's UCX and cmocka are optional: without them the UCX-staged case and
# the NCCL unit tests are left out (they run on every CPU build anyway). What is missing is taken from
# .gpu-deps/ (scripts/gpu-deps.sh, for a machine with no package mirror), else installed with apt-get
# where this is root and a mirror answers; otherwise the summary names it and the run stops.
#
# Exit status: 0 when every step passed on a GPU; 77 when no GPU is visible (nothing ran on a GPU, and
# the summary says so first); 1 when anything failed, including a GPU that nvidia-smi sees but on which
# no gpu test ran (a driver too old for this CUDA skips them all: that is a failure, not a pass).
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/gpu-results}
build=${XFFL_GPU_BUILD:-$root/build-gpu}
jobs=${JOBS:-$(nproc 2>/dev/null || echo 4)}
mkdir -p "$out"
summary=$out/summary.txt
: > "$summary"
status=0
say() { echo "$*" | tee -a "$summary"; }
step() { say "== $*"; }
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}  # NCCL's own warnings go into the logs below

{
  date -u
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2>&1 || echo "nvidia-smi: not available"
  command -v nvcc >/dev/null 2>&1 && nvcc --version | tail -2
  c++ --version 2>&1 | head -1
  cmake --version 2>&1 | head -1
  head -2 /etc/os-release 2>/dev/null
} > "$out/machine.txt"

gpus=0
if command -v nvidia-smi >/dev/null 2>&1; then
  gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
fi
step "GPUs seen by nvidia-smi: $gpus (NCCL_DEBUG=$NCCL_DEBUG)"
if [ "$gpus" -eq 0 ] && [ "${XFFL_GPU_CHECK_WITHOUT_GPU:-0}" != 1 ]; then
  say "NO GPU: nvidia-smi sees no device on this machine, so nothing can run on a GPU here."
  say "Run this script where a GPU is lent (XFFL_GPU_CHECK_WITHOUT_GPU=1 builds and runs it anyway: every gpu"
  say "test then skips)."
  exit 77
fi

step "prerequisites"
offline=$root/.gpu-deps  # Debian's packages for a machine with no mirror (below)
deps=$build/deps         # where they are unpacked
have_openssl() { [ -f /usr/include/openssl/evp.h ] || [ -f "$deps/usr/include/openssl/evp.h" ]; }
missing=""
need() {  # need COMMAND-OR-CHECK DEBIAN-PACKAGE DESCRIPTION
  if ! eval "$1" >/dev/null 2>&1; then missing="$missing $2"; say "missing: $3 (Debian package $2)"; fi
}
check_prerequisites() {
  missing=""
  need "cmake --version" cmake "CMake >= 3.25"
  need "pkg-config --version" pkg-config "pkg-config"
  need "c++ --version" g++ "a C++17 compiler"
  need have_openssl libssl-dev "OpenSSL headers"
}

# A machine that reaches no package mirror (a lent GPU machine): scripts/gpu-deps.sh, run where one
# answers, leaves Debian's packages in .gpu-deps/. Each group the machine lacks is unpacked under the build
# folder (never into /), its pkg-config and CMake files pointed there, and found through the usual
# variables (CMAKE_PREFIX_PATH finds OpenSSL's headers and library there too). Groups the machine has
# are left alone, so its own libraries are the ones used (XFFL_GPU_DEPS=all unpacks and uses every
# group: to try the folder on a machine that has them).
unpack() {  # unpack PACKAGE... from $offline into $deps; fails when one is not there
  local package file
  for package in "$@"; do
    file=$(ls "$offline/${package}"_*.deb 2>/dev/null | head -1)
    [ -n "$file" ] || { say "  $package: not in $offline"; return 1; }
    if command -v dpkg-deb >/dev/null 2>&1; then
      dpkg-deb -x "$file" "$deps" || return 1
    else
      (cd "$deps" && ar p "$file" data.tar.xz | tar xJ) || return 1
    fi
  done
}
if [ -d "$offline" ]; then
  mkdir -p "$deps"
  unpacked=""
  all=0; [ "${XFFL_GPU_DEPS:-}" = all ] && all=1
  export PATH=$deps/usr/bin:$PATH  # the unpacked pkg-config, where it is unpacked
  if [ $all = 1 ] || ! command -v pkg-config >/dev/null 2>&1; then
    unpack pkgconf pkgconf-bin libpkgconf3 && unpacked="$unpacked pkg-config"
  fi
  if [ $all = 1 ] || ! have_openssl; then
    unpack libssl-dev libssl3 && unpacked="$unpacked openssl"
  fi
  if [ $all = 1 ] || ! pkg-config --exists ucx 2>/dev/null; then
    unpack libucx0 libucx-dev libnuma1 && unpacked="$unpacked ucx"
  fi
  if [ $all = 1 ] || ! pkg-config --exists cmocka 2>/dev/null; then
    unpack libcmocka0 libcmocka-dev && unpacked="$unpacked cmocka"
  fi
  if [ -n "$unpacked" ]; then
    say "unpacked from .gpu-deps under $deps:$unpacked"
    # Debian's files name /usr as their prefix: point them at the unpacked tree.
    grep -rlE -e '/usr' --include='*.pc' --include='*.cmake' "$deps" 2>/dev/null \
      | xargs -r sed -i -E "s#(^prefix *= *|\")/usr#\1$deps/usr#; s#-([LI])/usr/#-\1$deps/usr/#g"
    lib=$deps/usr/lib/x86_64-linux-gnu
    export LD_LIBRARY_PATH=$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    export PKG_CONFIG_PATH=$lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
    export CMAKE_PREFIX_PATH=$deps/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}
    # Debian keeps OpenSSL's configuration.h under the multiarch folder, a default include path only in /usr.
    export CPATH=$deps/usr/include/x86_64-linux-gnu:$deps/usr/include${CPATH:+:$CPATH}
  fi
fi

check_prerequisites
if [ -n "$missing" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  say "installing:$missing"
  (timeout 20 apt-get update && timeout 40 apt-get install -y --no-install-recommends $missing) > "$out/apt.txt" 2>&1 \
    || say "apt-get could not install them (see apt.txt)"
  check_prerequisites
fi
if [ -n "$missing" ]; then step "FAILED: prerequisites missing:$missing"; exit 1; fi
cmake_version=$(cmake --version | head -1 | awk '{print $3}')
if [ "$(printf '%s\n3.25\n' "$cmake_version" | sort -V | head -1)" != 3.25 ]; then
  step "FAILED: CMake $cmake_version is older than 3.25"; exit 1
fi

# NCCL: under the CUDA toolkit or the system's library folders (CMake finds it there), or else the one
# PyTorch's wheels bring (nvidia-nccl-cu13: nccl.h and libnccl.so.2 only, which find_library's name
# "nccl" does not match), named to CMake.
cuda_root=${CUDAToolkit_ROOT:-/usr/local/cuda}
if [ ! -d "$cuda_root" ] && command -v nvcc >/dev/null 2>&1; then cuda_root=$(dirname "$(dirname "$(command -v nvcc)")"); fi
nccl_args=""
have_nccl=0
for library in "$cuda_root"/lib64/libnccl.so /usr/lib/x86_64-linux-gnu/libnccl.so /usr/lib64/libnccl.so; do
  [ -e "$library" ] && have_nccl=1
done
if [ $have_nccl = 0 ]; then
  wheel=$(python3 -c 'import importlib.util as u; s = u.find_spec("nvidia.nccl"); print(list(s.submodule_search_locations)[0])' 2>/dev/null)
  library=$(ls "$wheel"/lib/libnccl.so* 2>/dev/null | head -1)
  if [ -n "$wheel" ] && [ -f "$wheel/include/nccl.h" ] && [ -n "$library" ]; then
    nccl_args="-DXFFL_NCCL_INCLUDE_DIR=$wheel/include -DXFFL_NCCL_LIBRARY=$library"
    say "NCCL from the Python wheel: $library"
  fi
fi

step "configure (XFFL_WITH_CUDA=ON)"
extra=""
targets="gpu_test_collectives xffl-bench-nccl xffl-run xffl-federation"
have_ucx=0; have_cmocka=0
pkg-config --exists ucx 2>/dev/null && have_ucx=1
pkg-config --exists cmocka 2>/dev/null && have_cmocka=1
[ $have_ucx = 1 ] || extra="$extra -DXFFL_WITH_UCX=OFF"
if [ $have_cmocka = 1 ]; then
  targets="$targets unit_nccl_test_nccl_families unit_nccl_test_nccl_streams unit_nccl_test_nccl_watchdog"
  targets="$targets unit_nccl_test_nccl_mapping unit_nccl_test_nccl_federated"
  [ $have_ucx = 1 ] && targets="$targets unit_nccl_test_nccl_crossing"
else
  extra="$extra -DXFFL_REQUIRE_CMOCKA=OFF"
fi
say "ucx found: $have_ucx, cmocka found: $have_cmocka"
if ! timeout 60 cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DXFFL_WITH_CUDA=ON \
      -DXFFL_BUILD_EXAMPLES=OFF -DCUDAToolkit_ROOT="$cuda_root" $nccl_args $extra > "$out/configure.txt" 2>&1; then
  step "FAILED: configure (see configure.txt)"; tail -20 "$out/configure.txt" | tee -a "$summary"; exit 1
fi
step "build"
if ! timeout 200 cmake --build "$build" -j "$jobs" --target $targets > "$out/build.txt" 2>&1; then
  step "FAILED: build (see build.txt)"; grep -m 20 -E "error|Error" "$out/build.txt" | tee -a "$summary"; exit 1
fi

step "ctest -L gpu (worlds of 1, 2, 4, 8 where the devices exist), and the NCCL unit tests"
(cd "$build" && timeout 150 ctest -L gpu -V --timeout 120) > "$out/ctest-gpu.txt" 2>&1 || status=1
if [ $have_cmocka = 1 ]; then
  (cd "$build" && timeout 40 ctest -R unit_nccl --output-on-failure) > "$out/ctest-unit-nccl.txt" 2>&1 || status=1
  grep -E "tests passed|tests failed" "$out/ctest-unit-nccl.txt" | sed 's/^/unit_nccl: /' | tee -a "$summary"
fi
grep -E "tests passed|Skipped|Passed|Failed|SKIP|FAIL|rank [0-9]+ on device|federated \(|staged" "$out/ctest-gpu.txt" \
  | tee -a "$summary"
ran=$(grep -cE "gpu\.collectives\.[a-z0-9]+ .*Passed" "$out/ctest-gpu.txt" || true)
if [ "$gpus" -gt 0 ] && [ "$ran" -eq 0 ]; then
  say "FAILED: nvidia-smi sees $gpus GPU(s) but no gpu test ran (all skipped: a driver older than this CUDA?)"
  status=1
fi

# XFFL_FACILITY_FAULTS=continue over device memory (state/facility_rounds.h): the built-in federation
# store and three facility jobs under xffl-run --backend nccl (crossing over wan, staged through the
# host), one rank each (two, with HSDP 1, so that the relay inside a facility runs on NCCL, where two
# or more devices exist: NCCL refuses two ranks of one communicator on one device). Facility 2 leaves
# after its first average (its lease revoked); 0 and 1 go on among themselves. Every round of
# gpu_test_collectives continue_facility checks the exact mean over the live facilities read back from
# device memory. First run on a GPU (one H200) on 2026-12-04: passed.
step "continue on device memory: three facility jobs, facility 2 leaves after round 1"
per=1; hsdp_args=""
if [ "$gpus" -ge 2 ]; then per=2; hsdp_args="--hsdp 1"; fi
continue_status=0
secret="gpu-check-$$"
server_out=$out/federation.out
XFFL_AUTH_TOKEN=$secret timeout 40 "$build/tools/xffl-federation/xffl-federation" --listen 127.0.0.1:0 > "$server_out" 2>&1 &
server=$!
endpoint=""
for _ in $(seq 50); do
  endpoint=$(grep -m1 -oE "listening on [^ ]+" "$server_out" 2>/dev/null | awk '{print $3}')
  [ -n "$endpoint" ] && break
  sleep 0.1
done
if [ -z "$endpoint" ]; then
  say "FAILED: xffl-federation did not say where it listens (see federation.out)"; continue_status=1
else
  pids=""
  for f in 0 1 2; do
    leave=0; [ $f = 2 ] && leave=1
    XFFL_AUTH_TOKEN=$secret XFFL_JOB_ID=gpu-continue XFFL_FACILITY_FAULTS=continue XFFL_DEVICE=cuda XFFL_LOG_LEVEL=info \
      timeout 35 "$build/tools/xffl-run/xffl-run" -n $per --backend nccl --timeout 20 --federated $per,$per,$per \
      $hsdp_args --facility $f --federation "xffl://$endpoint" -- "$build/tests/gpu/gpu_test_collectives" \
      continue_facility 3 $leave > "$out/continue-facility$f.txt" 2>&1 &
    pids="$pids $!"
  done
  for pid in $pids; do wait "$pid" || continue_status=1; done
fi
kill "$server" 2>/dev/null; wait "$server" 2>/dev/null
grep -hE "exact mean|leaves after|FAIL|rounds? .* redone|lost" "$out"/continue-facility*.txt | tee -a "$summary"
for f in 0 1; do  # the survivors reach round 3 among themselves
  grep -q "round 3 epoch [0-9]* live 0,1: exact" "$out/continue-facility$f.txt" || continue_status=1
done
[ $continue_status = 0 ] && say "continue on device memory: passed" || { say "continue on device memory: FAILED"; status=1; }

# The C API case again with XFFL_ENQUEUE_ONLY=1: each call returns once its work is enqueued, and the
# test reads every result on the caller's stream (the bucket copies, the allreduce and the copies back
# must be ordered on it with no host wait between them).
step "enqueue-only: the C API case with XFFL_ENQUEUE_ONLY=1"
XFFL_ENQUEUE_ONLY=1 timeout 60 "$build/tests/gpu/gpu_test_collectives" federated > "$out/enqueue-only.txt" 2>&1
rc=$?
[ $rc -eq 0 ] || [ $rc -eq 77 ] || { say "enqueue-only: FAILED, exit $rc (see enqueue-only.txt)"; status=1; }
grep -hE "passed|FAIL|SKIP" "$out/enqueue-only.txt" | tee -a "$summary"

# compute-sanitizer's memcheck over the one-GPU cases: an out-of-bounds or misaligned device access, a
# leak of device memory, or a CUDA call that fails, by xffl or by NCCL on xffl's buffers. Each case is
# bounded by what is left of this script's 9.5 minutes (NCCL's kernels are instrumented as they load).
# NCCL's own kernel probes at initialization are counted apart (scripts/memcheck-errors.awk says how);
# any other error fails.
memcheck_errors() {  # memcheck_errors LOG: prints "ERRORS NCCL_PROBES" (-1 errors: no summary)
  awk -f "$root/scripts/memcheck-errors.awk" "$1"
}
sanitizer=$(command -v compute-sanitizer || ls "$cuda_root/bin/compute-sanitizer" 2>/dev/null)
step "compute-sanitizer memcheck: world1, federated, staged"
if [ -z "$sanitizer" ]; then
  say "compute-sanitizer not found: memcheck skipped"
else
  for mode in world1 federated staged; do
    left=$((570 - SECONDS - 110))  # the benchmark below keeps its 100 s
    if [ $left -lt 30 ]; then say "memcheck $mode: skipped, too little time left"; continue; fi
    timeout $((left < 120 ? left : 120)) "$sanitizer" --tool memcheck --leak-check full \
      --print-limit 100 "$build/tests/gpu/gpu_test_collectives" $mode > "$out/memcheck-$mode.txt" 2>&1
    rc=$?
    read -r errors probes < <(memcheck_errors "$out/memcheck-$mode.txt")
    if [ $rc -eq 77 ]; then
      say "memcheck $mode: skipped (the case exits 77)"
    elif [ $rc -ne 0 ]; then  # without --error-exitcode, the exit status is the case's
      say "memcheck $mode: FAILED, the case exited $rc (see memcheck-$mode.txt)"; status=1
    elif [ "$errors" -lt 0 ]; then
      say "memcheck $mode: FAILED, no error summary: memcheck did not finish (see memcheck-$mode.txt)"; status=1
    elif [ "$errors" -gt "$probes" ]; then
      say "memcheck $mode: FAILED, $((errors - probes)) error(s) besides NCCL's $probes kernel probe(s) (see memcheck-$mode.txt)"
      status=1
    else
      say "memcheck $mode: passed, no error besides NCCL's $probes kernel probe(s)"
    fi
  done
fi

step "GPU benchmark (xffl allreduce vs raw NCCL, same run)"
timeout 100 "$build/bench/gpu/xffl-bench-nccl" --min-bytes 1048576 --max-bytes 1073741824 --iters 20 --warmup 5 \
  > "$out/bench-nccl.txt" 2>&1
bench_rc=$?
[ $bench_rc -eq 0 ] || [ $bench_rc -eq 77 ] || status=1  # 77: no device, skipped with the reason
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=memory.used --format=csv >> "$out/bench-nccl.txt" 2>&1
tee -a "$summary" < "$out/bench-nccl.txt"

step "done: status $status ($ran gpu tests passed on $gpus GPU(s))"
exit $status
