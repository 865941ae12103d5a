// The NCCL backend on real GPUs (label gpu). `world1`: one rank, every collective on device buffers
// and every dtype/op path NCCL runs natively (AVG, bf16, f16), the K-stream pool, the caller's stream.
// `federated`: the public C API with backend NCCL on one GPU (weights, _many's device bucket).
// `staged`: two ranks on one GPU whose crossing group runs over UCX through pinned host memory.
// `threads`: one rank per visible device as threads of this process (NCCL refuses two ranks on one
// GPU: "Duplicate GPU detected"), so it needs two devices; multi-rank logic on one GPU is covered by
// the fake (tests/unit_nccl). Without a device every case exits 77: ctest reports it skipped, with the
// reason printed.
#include <cuda_runtime.h>

#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "comm/nccl/device_streams.h"
#include "comm/nccl/host_staged_communicator.h"
#include "comm/nccl/nccl_backend.h"
#include "federated/registry.h"
#ifdef XFFL_GPU_TEST_UCX
#include "comm/ucx/ucx_backend.h"
#endif
#include "gpu_support.h"
#include "xffl.h"

using namespace xffl;
using namespace xffl::comm;

namespace {

void check(bool ok, const std::string &what) {
  if (!ok) (xffl::fail)(XFFL_EINTERNAL, "check failed: ", what);
}

void cuda(cudaError_t rc, const char *what) {
  if (rc != cudaSuccess) (xffl::fail)(XFFL_EBACKEND, what, ": ", cudaGetErrorString(rc));
}

template <typename T>
struct DeviceBuffer {
  T *ptr = nullptr;
  size_t count;
  explicit DeviceBuffer(size_t n) : count(n) { cuda(cudaMalloc(reinterpret_cast<void **>(&ptr), n * sizeof(T)), "cudaMalloc"); }
  ~DeviceBuffer() { cudaFree(ptr); }
  // Ordered on the stream the next collective runs on: the pool's streams are non-blocking, so a plain
  // cudaMemcpy (legacy default stream) would not be ordered before work on them, and from pageable
  // memory it may return before its DMA is done.
  void put(const std::vector<T> &values, cudaStream_t stream) {
    cuda(cudaMemcpyAsync(ptr, values.data(), values.size() * sizeof(T), cudaMemcpyHostToDevice, stream), "put");
    cuda(cudaStreamSynchronize(stream), "put (synchronize)");
  }
  std::vector<T> get(cudaStream_t stream) const {
    std::vector<T> values(count);
    cuda(cudaMemcpyAsync(values.data(), ptr, count * sizeof(T), cudaMemcpyDeviceToHost, stream), "get");
    cuda(cudaStreamSynchronize(stream), "get (synchronize)");
    return values;
  }
};

// bf16 of a small integer is exact: its upper 16 bits as a float.
unsigned short bf16(float value) {
  unsigned bits;
  std::memcpy(&bits, &value, sizeof bits);
  return static_cast<unsigned short>(bits >> 16);
}

// f16 of a small power of two or small integer (exact): sign 0, exponent, 10-bit mantissa.
unsigned short f16(float value) {
  int exponent = 0;
  const float mantissa = std::frexp(value, &exponent);  // value = mantissa * 2^exponent, mantissa in [0.5, 1)
  return static_cast<unsigned short>(((exponent - 1 + 15) << 10) |
                                     static_cast<unsigned>((mantissa * 2.0f - 1.0f) * 1024.0f));
}

void run_rank(int rank, int world, std::shared_ptr<Exchange> exchange, int device) {
  NcclBackend backend(nccl::real_nccl_api(), exchange, rank, world, 60000);
  backend.select_device(device, 0, 2);
  check(backend.device() == device, "device chosen");
  GroupSpec world_spec{topology::RankList::progression(0, 1, world), rank, "world group", 1};
  backend.register_world(world_spec);
  auto group = backend.create_communicator(world_spec);
  const size_t n = 1 << 20;
  const float w = static_cast<float>(world);
  float sum_of_ranks = 0;
  for (int r = 0; r < world; ++r) sum_of_ranks += static_cast<float>(r);

  DeviceBuffer<float> a(n), b(n * static_cast<size_t>(world));
  cudaStream_t pool0 = static_cast<cudaStream_t>(backend.stream(0)), pool1 = static_cast<cudaStream_t>(backend.stream(1));
  a.put(std::vector<float>(n, static_cast<float>(rank)), pool0);
  group->allreduce(a.ptr, a.ptr, n, XFFL_F32, XFFL_SUM, nullptr);  // in place, pool stream 0
  check(a.get(pool0)[n - 1] == sum_of_ranks, "allreduce f32 sum");
  a.put(std::vector<float>(n, static_cast<float>(rank)), pool1);
  group->allreduce(a.ptr, b.ptr, n, XFFL_F32, XFFL_AVG, pool1);  // native AVG, pool stream 1
  check(std::fabs(b.get(pool1)[0] - sum_of_ranks / w) < 1e-6f, "allreduce f32 avg");

  DeviceBuffer<unsigned short> h(n);
  h.put(std::vector<unsigned short>(n, bf16(2.0f)), pool0);
  group->allreduce(h.ptr, h.ptr, n, XFFL_BF16, XFFL_AVG, nullptr);
  check(h.get(pool0)[7] == bf16(2.0f), "allreduce bf16 avg");

  cudaStream_t mine;
  cuda(cudaStreamCreateWithFlags(&mine, cudaStreamNonBlocking), "stream");
  a.put(std::vector<float>(n, static_cast<float>(rank == 0 ? 42 : -1)), mine);
  group->broadcast(a.ptr, n, XFFL_F32, 0, mine);  // the caller's stream
  check(a.get(mine)[3] == 42.0f, "broadcast");
  a.put(std::vector<float>(n, static_cast<float>(rank)), mine);
  group->allgather(a.ptr, b.ptr, n, XFFL_F32, mine);
  auto gathered = b.get(mine);
  for (int r = 0; r < world; ++r) check(gathered[static_cast<size_t>(r) * n] == static_cast<float>(r), "allgather");
  b.put(std::vector<float>(n * static_cast<size_t>(world), 1.0f), pool0);
  group->reduce_scatter(b.ptr, a.ptr, n, XFFL_F32, XFFL_SUM, nullptr);
  check(a.get(pool0)[0] == w, "reduce_scatter");
  // FedAvg's weights: one PreMulSum per call, each rank's own factor (rank + 1). On one rank too: NCCL
  // runs the real kernel there, so a factor other than 1 must show.
  a.put(std::vector<float>(n, 1.0f), mine);
  group->allreduce_scaled(a.ptr, n, XFFL_F32, XFFL_SUM, rank + 3.0, mine);
  check(a.get(mine)[n / 2] == sum_of_ranks + 3.0f * w, "allreduce_scaled f32 (PreMulSum)");
  // 16-bit scalars: the factor travels in the collective's own type (0.5 and 0.25 are exact in both).
  h.put(std::vector<unsigned short>(n, bf16(4.0f)), mine);
  group->allreduce_scaled(h.ptr, n, XFFL_BF16, XFFL_SUM, 0.5, mine);
  check(h.get(mine)[n - 1] == bf16(2.0f * w), "allreduce_scaled bf16 (PreMulSum scalar 0.5)");
  h.put(std::vector<unsigned short>(n, f16(4.0f)), mine);
  group->allreduce_scaled(h.ptr, n, XFFL_F16, XFFL_AVG, 0.25, mine);
  check(h.get(mine)[1] == f16(1.0f), "allreduce_scaled f16 avg (PreMulSum scalar 0.25 / size)");
  group->barrier();
  cudaStreamDestroy(mine);
  std::printf("rank %d on device %d: allreduce (sum, avg, bf16 avg), broadcast, allgather, reduce_scatter, "
              "PreMulSum (f32, bf16, f16), barrier passed; communicators made: %d\n", rank, device,
              backend.communicators_created());
}

void ok(xffl_status_t rc, const char *what) {
  if (rc != XFFL_OK) (xffl::fail)(rc, what, ": ", xffl_last_error_message());
}

// The public C API on one GPU, as a user calls it: backend NCCL, one rank, federated scaling, weights,
// and _many over device buffers (small ones through a cudaMallocAsync bucket, one of 16 MiB + 4 bytes
// in place) on the caller's stream. A mean over one group is the identity, so every byte must come
// back where it was: a bucket copy in the wrong place shows.
void run_federated_c_api() {
  xffl_state_t *st = nullptr;
  ok(xffl_state_create(&st), "xffl_state_create");
  std::unique_ptr<xffl_state_t, void (*)(xffl_state_t *)> owned(st, xffl_state_destroy);
  ok(xffl_set_global(st, XFFL_BACKEND_NCCL, XFFL_DEVICE_CUDA, "127.0.0.1", 0, 0, 1), "xffl_set_global");
  ok(xffl_set_exec_device(st, -1, 2), "xffl_set_exec_device");
  const int sizes[] = {1};
  ok(xffl_federated_scaling(st, sizes, 1, 0), "xffl_federated_scaling");
  const double weights[] = {3.0};
  ok(xffl_set_federated_weights(st, weights, 1), "xffl_set_federated_weights");
  const std::vector<size_t> counts{3, 1000, 0, (size_t{16} << 20) / 4 + 1, 7};
  cudaStream_t mine;
  cuda(cudaStreamCreateWithFlags(&mine, cudaStreamNonBlocking), "stream");
  std::vector<std::unique_ptr<DeviceBuffer<float>>> buffers;
  std::vector<void *> bufs;
  for (size_t b = 0; b < counts.size(); ++b) {
    buffers.push_back(std::make_unique<DeviceBuffer<float>>(counts[b]));
    std::vector<float> values(counts[b]);
    for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(b * 1000 + i % 4096);
    if (!values.empty()) buffers.back()->put(values, mine);
    bufs.push_back(buffers.back()->ptr);
  }
  ok(xffl_federated_average_many(st, bufs.data(), counts.data(), counts.size(), XFFL_F32, mine),
     "xffl_federated_average_many");
  cuda(cudaStreamSynchronize(mine), "cudaStreamSynchronize");
  for (size_t b = 0; b < counts.size(); ++b) {
    if (!counts[b]) continue;
    const std::vector<float> values = buffers[b]->get(mine);
    for (size_t i = 0; i < values.size(); ++i)
      check(values[i] == static_cast<float>(b * 1000 + i % 4096), "_many returned every byte in place");
  }
  ok(xffl_federated_average(st, bufs[1], counts[1], XFFL_F32, nullptr), "xffl_federated_average");
  cudaStreamDestroy(mine);
  std::printf("federated (C API, NCCL, 1 rank): weights, _many with a device bucket and a 16 MiB buffer passed\n");
}

// XFFL_FACILITY_FAULTS=continue over device memory (state/facility_rounds.h): one rank of a facility
// job started by xffl-run --backend nccl --facility I --federation E (scripts/gpu-check.sh starts the
// federation's store and three such jobs). Facility f contributes (i % 89) + 3 f + 7 r to element i in
// round r; each round's result must be the exact mean over XFFL_ATTR_LIVE_FACILITIES, read back from
// device memory. A facility given leave_after > 0 leaves after that many averages (its state destroyed:
// its lease revoked), and the others go on among themselves. Prints one line per round.
int run_continue_facility(int rounds, int leave_after) {
  xffl_state_t *st = nullptr;
  ok(xffl_state_from_env(&st), "xffl_state_from_env");
  std::unique_ptr<xffl_state_t, void (*)(xffl_state_t *)> owned(st, xffl_state_destroy);
  const char *facility_text = std::getenv("XFFL_FACILITY");
  check(facility_text != nullptr, "XFFL_FACILITY is set (run under xffl-run --facility)");
  const int facility = std::atoi(facility_text);
  int rank = -1;
  ok(xffl_get_int(st, XFFL_ATTR_RANK, &rank), "XFFL_ATTR_RANK");
  const size_t n = (size_t{64} << 20) / sizeof(float) + 3;  // 64 MiB and a tail
  DeviceBuffer<float> shard(n);
  cudaStream_t mine;
  cuda(cudaStreamCreateWithFlags(&mine, cudaStreamNonBlocking), "stream");
  std::vector<float> values(n);
  for (int done = 0, round = 0; round < rounds; ++done) {
    if (leave_after > 0 && done == leave_after) {
      std::printf("rank %d facility %d: leaves after %d averages\n", rank, facility, done);
      break;
    }
    for (size_t i = 0; i < n; ++i) values[i] = static_cast<float>(i % 89 + 3 * facility + 7 * (round + 1));
    shard.put(values, mine);
    ok(xffl_federated_average(st, shard.ptr, n, XFFL_F32, mine), "xffl_federated_average (continue)");
    int epoch = 0;
    size_t n_live = 0;
    int live[64];
    ok(xffl_get_int(st, XFFL_ATTR_FEDERATION_ROUND, &round), "XFFL_ATTR_FEDERATION_ROUND");
    ok(xffl_get_int(st, XFFL_ATTR_FEDERATION_EPOCH, &epoch), "XFFL_ATTR_FEDERATION_EPOCH");
    ok(xffl_get_ints(st, XFFL_ATTR_LIVE_FACILITIES, live, 64, &n_live), "XFFL_ATTR_LIVE_FACILITIES");
    const std::vector<float> got = shard.get(mine);
    std::string live_text;
    for (size_t k = 0; k < n_live; ++k) live_text += (k ? "," : "") + std::to_string(live[k]);
    for (size_t i : {size_t{0}, size_t{1}, size_t{88}, n / 2, n - 1}) {
      float sum = 0;
      for (size_t k = 0; k < n_live; ++k) sum += static_cast<float>(i % 89 + 3 * live[k] + 7 * round);
      check(got[i] == sum / static_cast<float>(n_live), "round " + std::to_string(round) + " element " +
                                                            std::to_string(i) + " is the exact mean over " + live_text);
    }
    std::printf("rank %d facility %d: round %d epoch %d live %s: exact mean on device memory\n", rank, facility, round,
                epoch, live_text.c_str());
  }
  cudaStreamDestroy(mine);
  return 0;
}

#ifdef XFFL_GPU_TEST_UCX
// XFFL_OPT_CROSS_FACILITY_BACKEND=UCX on a real GPU: two ranks (threads) share device 0, which NCCL
// would refuse, but a crossing group needs no NCCL communicator: its collectives stage real device
// memory through cudaMallocHost memory and run over UCX. Checks every staged collective and a weighted
// FLAT federated average.
void run_staged_rank(int rank, std::shared_ptr<Exchange> nccl_exchange, Exchange &ucx_exchange) {
  NcclBackend backend(nccl::real_nccl_api(), nccl_exchange, rank, 2, 60000);
  backend.select_device(0, 0, 1);
  backend.set_crossing_backend(std::make_shared<UcxBackend>(rank, 2, ucx_exchange, 60000, XFFL_LOG_ERROR));
  GroupSpec spec{topology::RankList::progression(0, 1, 2), rank, "federated group", 10};
  spec.crosses_facilities = true;
  auto group = backend.create_communicator(spec);
  check(dynamic_cast<nccl::HostStagedCommunicator *>(group.get()) != nullptr, "the crossing group is staged");
  const size_t n = (size_t{300} << 20) / sizeof(float);  // 300 MiB: two staging chunks
  DeviceBuffer<float> a(n), b(2 * n);
  cudaStream_t pool0 = static_cast<cudaStream_t>(backend.stream(0));
  a.put(std::vector<float>(n, static_cast<float>(rank + 1)), pool0);
  group->allreduce(a.ptr, a.ptr, n, XFFL_F32, XFFL_SUM, nullptr);
  const std::vector<float> summed = a.get(pool0);
  check(summed[0] == 3.0f && summed[n - 1] == 3.0f, "staged allreduce over two chunks");
  a.put(std::vector<float>(n, static_cast<float>(rank + 1)), pool0);
  group->allgather(a.ptr, b.ptr, 1000, XFFL_F32, nullptr);
  const std::vector<float> gathered = b.get(pool0);
  check(gathered[0] == 1.0f && gathered[1000] == 2.0f, "staged allgather");
  a.put(std::vector<float>(n, static_cast<float>(rank == 1 ? 9 : -1)), pool0);
  group->broadcast(a.ptr, n, XFFL_F32, 1, nullptr);
  check(a.get(pool0)[n / 3] == 9.0f, "staged broadcast from member 1");
  federated::Roles roles;
  roles.federated = group.get();
  roles.federated_groups = 2;
  roles.federated_rank = rank;
  roles.weight_factor = 2.0 * (rank == 0 ? 1.0 : 3.0) / 4.0;  // weights (1, 3)
  a.put(std::vector<float>(n, rank == 0 ? 4.0f : 8.0f), pool0);
  const federated::StrategyTable strategies;
  strategies.get(XFFL_FEDAVG_HIERARCHICAL).average(roles, a.ptr, n, XFFL_F32, backend.stream(0));
  check(a.get(pool0)[12345] == 7.0f, "weighted federated average over UCX");
  // The compressed WAN hop on device memory, staged through host memory in windows (300 MiB: many).
  roles.wire_format = XFFL_WIRE_INT8_BLOCK;
  roles.device_memory = true;
  roles.host_crossing = backend.crossing_on_host();
  a.put(std::vector<float>(n, rank == 0 ? 4.0f : 8.0f), pool0);
  strategies.get(XFFL_FEDAVG_HIERARCHICAL).average(roles, a.ptr, n, XFFL_F32, backend.stream(0));
  const std::vector<float> compressed = a.get(pool0);
  // Copies 2 and 12 (weights 1, 3): each code within its block's max / 254, the mean within 7 / 254.
  for (size_t i : {size_t{0}, size_t{12345}, n / 2, n - 1})
    check(std::fabs(compressed[i] - 7.0f) <= 7.0f / 254 + 1e-5f && compressed[i] == compressed[0],
          "int8_block federated average staged through host memory");
  std::printf("rank %d: staged allreduce (2 chunks), allgather, broadcast, weighted average (f32, int8_block) "
              "over UCX passed; "
              "NCCL communicators made: %d\n", rank, backend.communicators_created());
}

int run_staged() {
  auto nccl_exchange = std::make_shared<gpu::MemoryExchange>();
  gpu::MemoryExchange ucx_exchange;
  std::vector<std::string> errors(2);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < 2; ++rank)
    threads.emplace_back([&, rank] {
      try {
        run_staged_rank(rank, nccl_exchange, ucx_exchange);
      } catch (const std::exception &error) {
        errors[static_cast<size_t>(rank)] = error.what();
      }
    });
  for (auto &thread : threads) thread.join();
  int failed = 0;
  for (int rank = 0; rank < 2; ++rank)
    if (!errors[static_cast<size_t>(rank)].empty()) {
      std::printf("FAIL rank %d: %s\n", rank, errors[static_cast<size_t>(rank)].c_str());
      ++failed;
    }
  return failed ? 1 : 0;
}
#endif

}  // namespace

int main(int argc, char **argv) {
  const std::string mode = argc > 1 ? argv[1] : "world1";
  int devices = 0;
  const cudaError_t rc = cudaGetDeviceCount(&devices);
  if (rc != cudaSuccess || devices < 1) {
    std::printf("SKIP: no CUDA device (%s)\n", rc != cudaSuccess ? cudaGetErrorString(rc) : "0 devices");
    return gpu::kSkip;
  }
  if (mode == "staged") {
#ifdef XFFL_GPU_TEST_UCX
    return run_staged();
#else
    std::printf("SKIP: this build has no UCX backend\n");
    return gpu::kSkip;
#endif
  }
  if (mode == "continue_facility") {  // continue_facility ROUNDS [LEAVE_AFTER]
    try {
      return run_continue_facility(argc > 2 ? std::atoi(argv[2]) : 3, argc > 3 ? std::atoi(argv[3]) : 0);
    } catch (const std::exception &error) {
      std::printf("FAIL: %s\n", error.what());
      return 1;
    }
  }
  if (mode == "federated") {
    try {
      run_federated_c_api();
      return 0;
    } catch (const std::exception &error) {
      std::printf("FAIL: %s\n", error.what());
      return 1;
    }
  }
  // "threads" uses every device; "threads:N" a world of N ranks (one device each), for the multi-rank
  // paths that only a real NCCL runs (nonblocking InProgress answers, split, finalize, PreMulSum).
  int world = 1;
  if (mode == "threads") world = devices;
  if (mode.rfind("threads:", 0) == 0) world = std::atoi(mode.c_str() + 8);
  if (mode != "world1" && world < 2) {
    std::printf("SKIP: %d CUDA device; NCCL refuses two ranks on one GPU (Duplicate GPU detected), so multi-rank "
                "NCCL needs two devices here (the fake NCCL covers multi-rank logic)\n", devices);
    return gpu::kSkip;
  }
  if (world > devices) {
    std::printf("SKIP: a world of %d ranks needs %d devices; CUDA sees %d\n", world, world, devices);
    return gpu::kSkip;
  }
  auto exchange = std::make_shared<gpu::MemoryExchange>();
  std::vector<std::string> errors(static_cast<size_t>(world));
  std::vector<std::thread> threads;
  for (int rank = 0; rank < world; ++rank)
    threads.emplace_back([&, rank] {
      try {
        run_rank(rank, world, exchange, rank);
      } catch (const std::exception &error) {
        errors[static_cast<size_t>(rank)] = error.what();
      }
    });
  for (auto &thread : threads) thread.join();
  int failed = 0;
  for (int rank = 0; rank < world; ++rank)
    if (!errors[static_cast<size_t>(rank)].empty()) {
      std::printf("FAIL rank %d: %s\n", rank, errors[static_cast<size_t>(rank)].c_str());
      ++failed;
    }
  return failed ? 1 : 0;
}
