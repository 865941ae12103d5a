// The seam between the NCCL backend's logic and NCCL/CUDA themselves: the handful of calls the backend
// makes, behind one interface, so that split colours, communicator sharing, the stream pool and the
// watchdog run (and are unit-tested with a fake) on machines without a GPU or without NCCL at all.
// Handles are opaque pointers and codes are plain ints mirroring nccl.h and cuda_runtime.h (the real
// implementation checks the mirrors with static_asserts), so nothing above this file includes them.
#ifndef XFFL_SRC_COMM_NCCL_NCCL_API_H
#define XFFL_SRC_COMM_NCCL_NCCL_API_H

#include <cstddef>
#include <memory>
#include <string>

namespace xffl::comm::nccl {

using Comm = void *;    // ncclComm_t
using Stream = void *;  // cudaStream_t

struct UniqueId {
  unsigned char bytes[128] = {};  // NCCL_UNIQUE_ID_BYTES
};

// ncclResult_t
enum NcclCode : int {
  kNcclSuccess = 0,
  kNcclUnhandledCudaError = 1,
  kNcclSystemError = 2,
  kNcclInternalError = 3,
  kNcclInvalidArgument = 4,
  kNcclInvalidUsage = 5,
  kNcclRemoteError = 6,
  kNcclInProgress = 7,
};

// ncclDataType_t
enum NcclType : int {
  kNcclInt8 = 0,
  kNcclUint8 = 1,
  kNcclInt32 = 2,
  kNcclUint32 = 3,
  kNcclInt64 = 4,
  kNcclUint64 = 5,
  kNcclFloat16 = 6,
  kNcclFloat32 = 7,
  kNcclFloat64 = 8,
  kNcclBfloat16 = 9,
};

// ncclRedOp_t
enum NcclOp : int { kNcclSum = 0, kNcclProd = 1, kNcclMax = 2, kNcclMin = 3, kNcclAvg = 4 };

constexpr int kSplitNoColor = -1;  // NCCL_SPLIT_NOCOLOR

// cudaError_t values the backend tells apart.
constexpr int kCudaSuccess = 0;
constexpr int kCudaErrorStubLibrary = 34;
constexpr int kCudaErrorInsufficientDriver = 35;
constexpr int kCudaErrorDevicesUnavailable = 46;
constexpr int kCudaErrorNoDevice = 100;
constexpr int kCudaErrorNotReady = 600;

class NcclApi {
 public:
  virtual ~NcclApi() = default;

  // CUDA runtime. Every call returns a cudaError_t.
  virtual int device_count(int *count) = 0;
  virtual int set_device(int device) = 0;
  virtual int get_device(int *device) = 0;  // the calling thread's current device
  virtual int stream_create(Stream *stream) = 0;  // a non-blocking stream
  virtual int stream_destroy(Stream stream) = 0;
  virtual int stream_query(Stream stream) = 0;  // kCudaSuccess when idle, kCudaErrorNotReady while busy
  virtual int copy_async(void *dst, const void *src, size_t bytes, Stream stream) = 0;  // device to device
  virtual int device_alloc(void **ptr, size_t bytes) = 0;
  virtual int device_free(void *ptr) = 0;
  // Stream-ordered allocation (cudaMallocAsync / cudaFreeAsync): the memory is usable by work enqueued
  // on `stream` after the call, and returns to the pool once the work before the free is done.
  virtual int alloc_async(void **ptr, size_t bytes, Stream stream) = 0;
  virtual int free_async(void *ptr, Stream stream) = 0;
  // Pinned host memory (cudaMallocHost / cudaFreeHost), for staging device buffers through the host.
  virtual int host_alloc(void **ptr, size_t bytes) = 0;
  virtual int host_free(void *ptr) = 0;
  virtual std::string cuda_error_string(int code) = 0;

  // NCCL. Every call returns an ncclResult_t. Communicators are created nonblocking (config.blocking
  // = 0): creation and collectives may answer kNcclInProgress, then comm_get_async_error tells when
  // the communicator is ready again.
  virtual int get_unique_id(UniqueId *id) = 0;
  virtual int comm_init_rank(Comm *comm, int nranks, const UniqueId &id, int rank) = 0;
  // *child is NULL on return and receives the child only when the split completes (its progress is
  // reported by comm_get_async_error on the parent): child must stay valid until then.
  virtual int comm_split(Comm comm, int color, int key, Comm *child) = 0;
  // Nonblocking: normally kNcclInProgress; comm_get_async_error says kNcclSuccess once flushed, and
  // only then may comm_destroy follow. comm_abort and comm_destroy free the communicator.
  virtual int comm_get_async_error(Comm comm, int *async_error) = 0;
  virtual int comm_finalize(Comm comm) = 0;
  virtual int comm_destroy(Comm comm) = 0;
  virtual int comm_abort(Comm comm) = 0;
  virtual int all_reduce(const void *send, void *recv, size_t count, int type, int op, Comm comm,
                         Stream stream) = 0;
  virtual int broadcast(const void *send, void *recv, size_t count, int type, int root, Comm comm,
                        Stream stream) = 0;
  virtual int all_gather(const void *send, void *recv, size_t send_count, int type, Comm comm, Stream stream) = 0;
  virtual int reduce_scatter(const void *send, void *recv, size_t recv_count, int type, int op, Comm comm,
                             Stream stream) = 0;
  // ncclRedOpCreatePreMulSum with the scalar (of the collective's type) in host memory, read during the
  // call (ncclScalarHostImmediate): *op multiplies this rank's input by it before summing. Valid on
  // `comm` until red_op_destroy, which may follow the enqueue of the last collective using it.
  virtual int red_op_create_pre_mul_sum(int *op, const void *scalar, int type, Comm comm) = 0;
  virtual int red_op_destroy(int op, Comm comm) = 0;
  virtual int group_start() = 0;
  virtual int group_end() = 0;
  // ncclGetErrorString(code), followed by ncclGetLastError's detail when it has one.
  virtual std::string nccl_error_string(int code, Comm comm) = 0;
};

// The implementation over libnccl and libcudart; only in builds with XFFL_HAVE_NCCL.
std::shared_ptr<NcclApi> real_nccl_api();

}  // namespace xffl::comm::nccl

#endif
