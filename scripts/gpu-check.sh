#!/usr/bin/env bash
# The one prepared run for a machine with a GPU (e.g. one H200): builds xffl with CUDA and NCCL in its
# own build directory, runs the gpu tests and the GPU benchmark, and writes every result as text into
# $OUT (or ./gpu-results). Budget: under 8 minutes on one H200 with 16 cores.
#   scripts/gpu-check.sh            (from the repository root)
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/gpu-results}
build=${XFFL_GPU_BUILD:-$root/build-gpu}
jobs=${JOBS:-$(nproc 2>/dev/null || echo 4)}
mkdir -p "$out"
status=0
step() { echo "== $*" | tee -a "$out/summary.txt"; }

{
  date -u
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2>&1 || echo "nvidia-smi: not available"
  ls /usr/local/cuda/lib64/libnccl* 2>&1
} > "$out/machine.txt"

step "configure (XFFL_WITH_CUDA=ON)"
# Only what the GPU path needs: no examples or fuzzers, so the build fits the budget. The GPU machine's
# image may lack Debian's UCX and cmocka: then the UCX-staged case and the cmocka unit tests are left
# out (they run on every CPU build anyway), and the summary says so.
extra=""
targets="gpu_test_collectives xffl-bench-nccl"
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
step "ucx found: $have_ucx, cmocka found: $have_cmocka"
if ! timeout 120 cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DXFFL_WITH_CUDA=ON \
      -DXFFL_BUILD_EXAMPLES=OFF -DCUDAToolkit_ROOT=/usr/local/cuda $extra > "$out/configure.txt" 2>&1; then
  step "configure FAILED (see configure.txt)"; tail -20 "$out/configure.txt"; exit 1
fi
step "build"
if ! timeout 240 cmake --build "$build" -j "$jobs" --target $targets > "$out/build.txt" 2>&1; then
  step "build FAILED (see build.txt)"; grep -m 20 -E "error|Error" "$out/build.txt"; exit 1
fi

step "ctest -L gpu, and the NCCL unit tests"
(cd "$build" && timeout 240 ctest -L gpu -V --timeout 180) > "$out/ctest-gpu.txt" 2>&1 || status=1
if [ $have_cmocka = 1 ]; then
  (cd "$build" && timeout 60 ctest -R unit_nccl --output-on-failure) > "$out/ctest-unit-nccl.txt" 2>&1 || status=1
fi
grep -E "tests passed|Skipped|Passed|Failed|SKIP|FAIL|rank [0-9]+ on device" "$out/ctest-gpu.txt" | tee -a "$out/summary.txt"

step "GPU benchmark (xffl allreduce vs raw NCCL, same run)"
timeout 180 "$build/bench/gpu/xffl-bench-nccl" --min-bytes 1048576 --max-bytes 1073741824 --iters 20 --warmup 5 \
  > "$out/bench-nccl.txt" 2>&1
bench_rc=$?
[ $bench_rc -eq 0 ] || [ $bench_rc -eq 77 ] || status=1  # 77: no device, skipped with the reason
nvidia-smi --query-gpu=memory.used --format=csv >> "$out/bench-nccl.txt" 2>&1 || true
cat "$out/bench-nccl.txt" | tee -a "$out/summary.txt"

step "done: status $status"
exit $status
