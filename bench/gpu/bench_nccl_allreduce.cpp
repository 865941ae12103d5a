// xffl's NCCL allreduce next to a raw NCCL loop doing the same work in the same run (one rank per
// visible GPU, threads of this process; NCCL refuses two ranks on one GPU). Per size, nccl-tests
// columns for: raw NCCL (iterations enqueued, one sync), xffl stream-ordered (the same), and xffl in
// its default mode (each call waits for its result under the watchdog) next to a raw loop that also
// syncs every call. busbw = algbw * 2(n-1)/n; with one rank that factor is 0, so algbw is compared.
// The two waiting columns also give the rank thread's CPU time per call: cudaStreamSynchronize spins
// (CUDA's default schedule with more cores than GPUs), xffl's watchdog yields and then sleeps.
// Also: communicators created per rank and GPU memory the communicators take.
#include <cuda_runtime.h>
#include <time.h>
#include <nccl.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "comm/nccl/nccl_backend.h"
#include "gpu_support.h"

using namespace xffl::comm;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
  size_t min_bytes = 1 << 20, max_bytes = size_t{1} << 30;
  int iters = 20, warmup = 5, ranks = 0;
};

void cuda(cudaError_t rc, const char *what) {
  if (rc != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(rc));
    std::exit(1);
  }
}
void nccl_ok(ncclResult_t rc, const char *what) {
  if (rc != ncclSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, ncclGetErrorString(rc));
    std::exit(1);
  }
}

// A reusable barrier for the thread-ranks, so every rank times the same window.
class Barrier {
 public:
  explicit Barrier(int n) : n_(n) {}
  void wait() {
    std::unique_lock<std::mutex> lock(m_);
    const long gen = gen_;
    if (++count_ == n_) {
      count_ = 0;
      ++gen_;
      cv_.notify_all();
    } else {
      cv_.wait(lock, [&] { return gen_ != gen; });
    }
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  int n_, count_ = 0;
  long gen_ = 0;
};

struct Row {
  size_t bytes = 0;
  double raw_us = 0, raw_sync_us = 0, xffl_ordered_us = 0, xffl_wait_us = 0;
  double raw_sync_cpu_us = 0, xffl_wait_cpu_us = 0;  // the rank thread's CPU time per call
};

struct RankResult {
  std::vector<Row> rows;
  int communicators = 0;
  size_t comm_bytes = 0;
};

double thread_cpu_us() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) * 1e6 + static_cast<double>(now.tv_nsec) / 1e3;
}

// Wall time per call; the calling thread's CPU time per call in *cpu_us when given.
template <typename Body>
double time_us(cudaStream_t stream, int iters, Body body, bool sync_each, double *cpu_us = nullptr) {
  const double cpu_start = thread_cpu_us();
  auto start = Clock::now();
  for (int i = 0; i < iters; ++i) {
    body();
    if (sync_each) cuda(cudaStreamSynchronize(stream), "sync");
  }
  cuda(cudaStreamSynchronize(stream), "sync");
  const double wall = std::chrono::duration<double, std::micro>(Clock::now() - start).count() / iters;
  if (cpu_us) *cpu_us = (thread_cpu_us() - cpu_start) / iters;
  return wall;
}

void run_rank(int rank, int world, const Options &options, std::shared_ptr<Exchange> exchange, ncclUniqueId raw_id,
              Barrier &barrier, RankResult &result) {
  cuda(cudaSetDevice(rank), "cudaSetDevice");
  size_t free_before = 0, free_after = 0, total = 0;
  cuda(cudaMemGetInfo(&free_before, &total), "cudaMemGetInfo");
  ncclComm_t raw;
  nccl_ok(ncclCommInitRank(&raw, world, raw_id, rank), "ncclCommInitRank");
  NcclBackend backend(nccl::real_nccl_api(), exchange, rank, world, 120000);
  backend.select_device(rank, 0, 1);
  GroupSpec world_spec{xffl::topology::RankList::progression(0, 1, world), rank, "world group", 1};
  backend.register_world(world_spec);
  auto group = backend.create_communicator(world_spec);
  cudaStream_t stream = static_cast<cudaStream_t>(backend.stream(0));
  cuda(cudaMemGetInfo(&free_after, &total), "cudaMemGetInfo");
  result.comm_bytes = free_before > free_after ? free_before - free_after : 0;  // both communicators + pool

  void *send = nullptr, *recv = nullptr;
  cuda(cudaMalloc(&send, options.max_bytes), "cudaMalloc");
  cuda(cudaMalloc(&recv, options.max_bytes), "cudaMalloc");
  cuda(cudaMemset(send, 0, options.max_bytes), "cudaMemset");
  for (size_t bytes = options.min_bytes; bytes <= options.max_bytes; bytes *= 4) {
    const size_t count = bytes / sizeof(float);
    auto raw_call = [&] { nccl_ok(ncclAllReduce(send, recv, count, ncclFloat, ncclSum, raw, stream), "ncclAllReduce"); };
    auto xffl_call = [&] { group->allreduce(send, recv, count, XFFL_F32, XFFL_SUM, stream); };
    Row row;
    row.bytes = bytes;
    for (int i = 0; i < options.warmup; ++i) raw_call(), xffl_call();
    cuda(cudaStreamSynchronize(stream), "sync");
    barrier.wait();
    row.raw_us = time_us(stream, options.iters, raw_call, false);
    barrier.wait();
    backend.set_stream_ordered(true);
    row.xffl_ordered_us = time_us(stream, options.iters, xffl_call, false);
    backend.set_stream_ordered(false);
    barrier.wait();
    row.raw_sync_us = time_us(stream, options.iters, raw_call, true, &row.raw_sync_cpu_us);
    barrier.wait();
    row.xffl_wait_us = time_us(stream, options.iters, xffl_call, false, &row.xffl_wait_cpu_us);
    barrier.wait();
    result.rows.push_back(row);
  }
  result.communicators = backend.communicators_created();
  cudaFree(send);
  cudaFree(recv);
  ncclCommDestroy(raw);
}

}  // namespace

int main(int argc, char **argv) {
  Options options;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const long long value = std::atoll(argv[i + 1]);
    if (flag == "--min-bytes") options.min_bytes = static_cast<size_t>(value);
    else if (flag == "--max-bytes") options.max_bytes = static_cast<size_t>(value);
    else if (flag == "--iters") options.iters = static_cast<int>(value);
    else if (flag == "--warmup") options.warmup = static_cast<int>(value);
    else if (flag == "--ranks") options.ranks = static_cast<int>(value);
  }
  int devices = 0;
  const cudaError_t rc = cudaGetDeviceCount(&devices);
  if (rc != cudaSuccess || devices < 1) {
    std::printf("SKIP: no CUDA device (%s)\n", rc != cudaSuccess ? cudaGetErrorString(rc) : "0 devices");
    return gpu::kSkip;
  }
  const int world = options.ranks > 0 && options.ranks < devices ? options.ranks : devices;
  ncclUniqueId raw_id;
  nccl_ok(ncclGetUniqueId(&raw_id), "ncclGetUniqueId");
  auto exchange = std::make_shared<gpu::MemoryExchange>();
  Barrier barrier(world);
  std::vector<RankResult> results(static_cast<size_t>(world));
  std::vector<std::thread> threads;
  for (int rank = 0; rank < world; ++rank)
    threads.emplace_back([&, rank] {
      try {
        run_rank(rank, world, options, exchange, raw_id, barrier, results[static_cast<size_t>(rank)]);
      } catch (const std::exception &error) {
        std::fprintf(stderr, "rank %d: %s\n", rank, error.what());
        std::exit(1);
      }
    });
  for (auto &thread : threads) thread.join();

  int nccl_version = 0;
  ncclGetVersion(&nccl_version);
  const double factor = world > 1 ? 2.0 * (world - 1) / world : 1.0;
  const char *bw = world > 1 ? "busbw" : "algbw";
  std::printf("# xffl NCCL allreduce vs raw NCCL, f32 sum, %d rank(s) on %d GPU(s), NCCL %d, %d iterations\n", world,
              devices, nccl_version, options.iters);
  std::printf("# %s in GB/s (world size 1: busbw's factor 2(n-1)/n is 0, algbw is compared instead)\n", bw);
  std::printf("# cpu_*: rank 0's thread CPU time per call in us while it waits (raw_sync: cudaStreamSynchronize)\n");
  std::printf("%12s %12s %12s %8s %12s %12s %8s %12s %12s\n", "bytes", "raw", "xffl_async", "ratio", "raw_sync",
              "xffl_wait", "ratio", "cpu_raw_sync", "cpu_xffl");
  const RankResult &r0 = results[0];
  for (const Row &row : r0.rows) {
    auto gbps = [&](double us) { return static_cast<double>(row.bytes) / us / 1e3 * factor; };
    std::printf("%12zu %12.2f %12.2f %8.3f %12.2f %12.2f %8.3f %12.1f %12.1f\n", row.bytes, gbps(row.raw_us),
                gbps(row.xffl_ordered_us), row.raw_us / row.xffl_ordered_us, gbps(row.raw_sync_us),
                gbps(row.xffl_wait_us), row.raw_sync_us / row.xffl_wait_us, row.raw_sync_cpu_us, row.xffl_wait_cpu_us);
  }
  for (int rank = 0; rank < world; ++rank)
    std::printf("# rank %d: xffl communicators created %d; GPU memory taken by both communicators and the pool: "
                "%.1f MiB\n", rank, results[static_cast<size_t>(rank)].communicators,
                static_cast<double>(results[static_cast<size_t>(rank)].comm_bytes) / (1 << 20));
  return 0;
}
