// NcclApi over libnccl and libcudart (the runtime only: never the driver stub, so a binary linked with
// it starts on a machine without a GPU, where cudaGetDeviceCount answers with CUDA's own error).
#include <cuda_runtime.h>
#include <nccl.h>

#include <cstring>

#include "comm/nccl/nccl_api.h"

namespace xffl::comm::nccl {

static_assert(sizeof(UniqueId) == sizeof(ncclUniqueId), "NCCL id size");
static_assert(kNcclSuccess == static_cast<int>(ncclSuccess) && kNcclUnhandledCudaError == static_cast<int>(ncclUnhandledCudaError) &&
                  kNcclSystemError == static_cast<int>(ncclSystemError) && kNcclInternalError == static_cast<int>(ncclInternalError) &&
                  kNcclInvalidArgument == static_cast<int>(ncclInvalidArgument) && kNcclInvalidUsage == static_cast<int>(ncclInvalidUsage) &&
                  kNcclRemoteError == static_cast<int>(ncclRemoteError) && kNcclInProgress == static_cast<int>(ncclInProgress),
              "ncclResult_t mirror");
static_assert(kNcclInt8 == static_cast<int>(ncclInt8) && kNcclUint8 == static_cast<int>(ncclUint8) && kNcclInt32 == static_cast<int>(ncclInt32) &&
                  kNcclUint32 == static_cast<int>(ncclUint32) && kNcclInt64 == static_cast<int>(ncclInt64) && kNcclUint64 == static_cast<int>(ncclUint64) &&
                  kNcclFloat16 == static_cast<int>(ncclFloat16) && kNcclFloat32 == static_cast<int>(ncclFloat32) && kNcclFloat64 == static_cast<int>(ncclFloat64) &&
                  kNcclBfloat16 == static_cast<int>(ncclBfloat16),
              "ncclDataType_t mirror");
static_assert(kNcclSum == static_cast<int>(ncclSum) && kNcclProd == static_cast<int>(ncclProd) && kNcclMax == static_cast<int>(ncclMax) && kNcclMin == static_cast<int>(ncclMin) &&
                  kNcclAvg == static_cast<int>(ncclAvg),
              "ncclRedOp_t mirror");
static_assert(kSplitNoColor == static_cast<int>(NCCL_SPLIT_NOCOLOR), "NCCL_SPLIT_NOCOLOR mirror");
static_assert(kCudaSuccess == static_cast<int>(cudaSuccess) && kCudaErrorStubLibrary == static_cast<int>(cudaErrorStubLibrary) &&
                  kCudaErrorInsufficientDriver == static_cast<int>(cudaErrorInsufficientDriver) &&
                  kCudaErrorDevicesUnavailable == static_cast<int>(cudaErrorDevicesUnavailable) &&
                  kCudaErrorNoDevice == static_cast<int>(cudaErrorNoDevice) && kCudaErrorNotReady == static_cast<int>(cudaErrorNotReady),
              "cudaError_t mirror");

namespace {

ncclComm_t as_comm(Comm comm) { return static_cast<ncclComm_t>(comm); }
cudaStream_t as_stream(Stream stream) { return static_cast<cudaStream_t>(stream); }

ncclConfig_t nonblocking_config() {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;  // the watchdog polls; a dead peer must never hang the caller
  return config;
}

class CudaNcclApi final : public NcclApi {
 public:
  int device_count(int *count) override { return cudaGetDeviceCount(count); }
  int set_device(int device) override { return cudaSetDevice(device); }
  int get_device(int *device) override { return cudaGetDevice(device); }
  int stream_create(Stream *stream) override {
    cudaStream_t created = nullptr;
    const cudaError_t rc = cudaStreamCreateWithFlags(&created, cudaStreamNonBlocking);
    if (rc == cudaSuccess) *stream = created;
    return rc;
  }
  int stream_destroy(Stream stream) override { return cudaStreamDestroy(as_stream(stream)); }
  int stream_query(Stream stream) override { return cudaStreamQuery(as_stream(stream)); }
  int copy_async(void *dst, const void *src, size_t bytes, Stream stream) override {
    return cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, as_stream(stream));
  }
  int device_alloc(void **ptr, size_t bytes) override { return cudaMalloc(ptr, bytes); }
  int device_free(void *ptr) override { return cudaFree(ptr); }
  int alloc_async(void **ptr, size_t bytes, Stream stream) override {
    return cudaMallocAsync(ptr, bytes, as_stream(stream));
  }
  int free_async(void *ptr, Stream stream) override { return cudaFreeAsync(ptr, as_stream(stream)); }
  int host_alloc(void **ptr, size_t bytes) override { return cudaMallocHost(ptr, bytes); }
  int host_free(void *ptr) override { return cudaFreeHost(ptr); }
  std::string cuda_error_string(int code) override {
    return std::string(cudaGetErrorName(static_cast<cudaError_t>(code))) + ": " +
           cudaGetErrorString(static_cast<cudaError_t>(code));
  }

  int get_unique_id(UniqueId *id) override {
    ncclUniqueId made;
    const ncclResult_t rc = ncclGetUniqueId(&made);
    if (rc == ncclSuccess) std::memcpy(id->bytes, made.internal, sizeof id->bytes);
    return rc;
  }
  int comm_init_rank(Comm *comm, int nranks, const UniqueId &id, int rank) override {
    ncclUniqueId nccl_id;
    std::memcpy(nccl_id.internal, id.bytes, sizeof id.bytes);
    ncclConfig_t config = nonblocking_config();
    ncclComm_t made = nullptr;
    const ncclResult_t rc = ncclCommInitRankConfig(&made, nranks, nccl_id, rank, &config);
    *comm = made;
    return rc;
  }
  int comm_split(Comm comm, int color, int key, Comm *child) override {
    ncclConfig_t config = nonblocking_config();
    // Nonblocking: NCCL writes NULL now and the child through this very pointer when the split
    // completes (init.cc), so it must be the caller's storage, never a local of this function.
    static_assert(sizeof(Comm) == sizeof(ncclComm_t), "Comm holds an ncclComm_t");
    return ncclCommSplit(as_comm(comm), color, key, reinterpret_cast<ncclComm_t *>(child), &config);
  }
  int comm_get_async_error(Comm comm, int *async_error) override {
    ncclResult_t state = ncclSuccess;
    const ncclResult_t rc = ncclCommGetAsyncError(as_comm(comm), &state);
    *async_error = state;
    return rc;
  }
  int comm_finalize(Comm comm) override { return ncclCommFinalize(as_comm(comm)); }
  int comm_destroy(Comm comm) override { return ncclCommDestroy(as_comm(comm)); }
  int comm_abort(Comm comm) override { return ncclCommAbort(as_comm(comm)); }
  int all_reduce(const void *send, void *recv, size_t count, int type, int op, Comm comm, Stream stream) override {
    return ncclAllReduce(send, recv, count, static_cast<ncclDataType_t>(type), static_cast<ncclRedOp_t>(op),
                         as_comm(comm), as_stream(stream));
  }
  int broadcast(const void *send, void *recv, size_t count, int type, int root, Comm comm, Stream stream) override {
    return ncclBroadcast(send, recv, count, static_cast<ncclDataType_t>(type), root, as_comm(comm), as_stream(stream));
  }
  int all_gather(const void *send, void *recv, size_t send_count, int type, Comm comm, Stream stream) override {
    return ncclAllGather(send, recv, send_count, static_cast<ncclDataType_t>(type), as_comm(comm), as_stream(stream));
  }
  int reduce_scatter(const void *send, void *recv, size_t recv_count, int type, int op, Comm comm,
                     Stream stream) override {
    return ncclReduceScatter(send, recv, recv_count, static_cast<ncclDataType_t>(type), static_cast<ncclRedOp_t>(op),
                             as_comm(comm), as_stream(stream));
  }
  int red_op_create_pre_mul_sum(int *op, const void *scalar, int type, Comm comm) override {
    ncclRedOp_t made = ncclSum;
    const ncclResult_t rc = ncclRedOpCreatePreMulSum(&made, const_cast<void *>(scalar), static_cast<ncclDataType_t>(type),
                                                     ncclScalarHostImmediate, as_comm(comm));
    *op = static_cast<int>(made);
    return rc;
  }
  int red_op_destroy(int op, Comm comm) override {
    return ncclRedOpDestroy(static_cast<ncclRedOp_t>(op), as_comm(comm));
  }
  int group_start() override { return ncclGroupStart(); }
  int group_end() override { return ncclGroupEnd(); }
  std::string nccl_error_string(int code, Comm comm) override {
    std::string words = ncclGetErrorString(static_cast<ncclResult_t>(code));
    const char *detail = ncclGetLastError(as_comm(comm));
    if (detail && *detail) words += std::string(" (") + detail + ")";
    return words;
  }
};

}  // namespace

std::shared_ptr<NcclApi> real_nccl_api() { return std::make_shared<CudaNcclApi>(); }

}  // namespace xffl::comm::nccl
