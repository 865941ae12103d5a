// A fake NCCL and CUDA for the NCCL backend's unit tests: N ranks as threads of one process, "device"
// memory is host memory, communicators are cliques that complete a collective when every member has
// enqueued it (f32 and i32 are computed, PreMulSum too; other types are recorded only). Every call is recorded with
// the rank of the calling thread (bind_thread) so tests can count splits, inits and aborts per rank.
//
// Strict (set_strict, before any allocation): as NCCL and CUDA are. Device memory is an address range
// the host cannot touch (reserved without access: a host read or write of it is a segmentation fault),
// backed by memory only the fake's copies and collectives reach; a collective on memory that is not
// device memory is a misuse. Each stream runs its work in the order it was enqueued: a copy runs, and a
// collective's contribution is read, only once everything before it on its stream is done (a copy
// enqueued behind a collective that waits for its peers waits too), and stream-ordered frees release
// device memory once the stream is idle.
#ifndef XFFL_TESTS_UNIT_NCCL_FAKE_NCCL_H
#define XFFL_TESTS_UNIT_NCCL_FAKE_NCCL_H

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "comm/nccl/nccl_api.h"

namespace xffl::test {

using namespace xffl::comm::nccl;

struct FakeCall {
  // "init", "split", "allreduce", "broadcast", "allgather", "reduce_scatter", "abort", "copy",
  // "alloc_async", "free_async", "host_alloc", "premul_create", "premul_destroy", ...
  std::string name;
  int rank = -1;     // bound rank of the calling thread
  int device = -1;   // the calling thread's current device at the call
  int color = 0, key = 0, type = -1, op = -1, root = -1, size = 0;
  double scalar = 1.0;  // a PreMulSum's scalar (f32 and f64 read; others recorded as 1)
  size_t count = 0;
  Stream stream = nullptr;
};

class FakeNccl final : public NcclApi {
 public:
  explicit FakeNccl(int devices = 1);
  ~FakeNccl() override;

  static void bind_thread(int rank);  // the rank recorded for this thread's calls

  void set_device_count_error(int cuda_code) { device_count_error_ = cuda_code; }
  // Strict device memory and stream order (see above); call before the first allocation.
  void set_strict(bool on);
  // What NCCL or CUDA would not survive: a communicator used after ncclCommAbort or ncclCommDestroy
  // freed it, cudaFree while a stream has work that may never finish (it synchronizes). Each entry
  // names the call and the rank; the harness turns them into failures of that rank.
  std::vector<std::pair<int, std::string>> misuses() const;
  // Collectives answer kNcclInProgress (as a nonblocking communicator may) instead of kNcclSuccess.
  void set_collectives_in_progress(bool on) { collectives_in_progress_ = on; }
  // The next async-error poll of any communicator of `rank` answers `nccl_code`.
  void inject_async_error(int rank, int nccl_code);

  std::vector<FakeCall> calls() const;
  int count(const std::string &name, int rank) const;

  int device_count(int *count) override;
  int set_device(int device) override;
  int get_device(int *device) override;
  // The calling thread's current device, as CUDA keeps it: per thread, 0 until set.
  static int current_device();
  int stream_create(Stream *stream) override;
  int stream_destroy(Stream stream) override;
  int stream_query(Stream stream) override;
  int copy_async(void *dst, const void *src, size_t bytes, Stream stream) override;
  int device_alloc(void **ptr, size_t bytes) override;
  int device_free(void *ptr) override;
  int alloc_async(void **ptr, size_t bytes, Stream stream) override;
  int free_async(void *ptr, Stream stream) override;  // freed once the stream is idle
  int host_alloc(void **ptr, size_t bytes) override;
  int host_free(void *ptr) override;
  std::string cuda_error_string(int code) override;

  int get_unique_id(UniqueId *id) override;
  int comm_init_rank(Comm *comm, int nranks, const UniqueId &id, int rank) override;
  int comm_split(Comm comm, int color, int key, Comm *child) override;
  int comm_get_async_error(Comm comm, int *async_error) override;
  int comm_finalize(Comm comm) override;
  int comm_destroy(Comm comm) override;
  int comm_abort(Comm comm) override;
  int all_reduce(const void *send, void *recv, size_t count, int type, int op, Comm comm, Stream stream) override;
  int broadcast(const void *send, void *recv, size_t count, int type, int root, Comm comm, Stream stream) override;
  int all_gather(const void *send, void *recv, size_t send_count, int type, Comm comm, Stream stream) override;
  int reduce_scatter(const void *send, void *recv, size_t recv_count, int type, int op, Comm comm,
                     Stream stream) override;
  int red_op_create_pre_mul_sum(int *op, const void *scalar, int type, Comm comm) override;
  int red_op_destroy(int op, Comm comm) override;
  int group_start() override { return kNcclSuccess; }
  int group_end() override { return kNcclSuccess; }
  std::string nccl_error_string(int code, Comm comm) override;

  struct Clique;
  struct FakeComm;
  struct FakeStream;

 private:
  int enqueue(const FakeCall &call, const void *send, void *recv, FakeComm *comm, Stream stream);
  void record(FakeCall call);
  // True (and recorded) when comm was freed by abort or destroy.
  bool freed(const FakeComm *comm, const char *call);
  // Strict: device memory. A device pointer's backing memory (null, and a misuse recorded, when the
  // range [ptr, ptr + bytes) is not inside one live allocation); a host pointer itself.
  bool is_device(const void *ptr) const;
  void *backing(const void *ptr, size_t bytes, const char *call);
  void *device_allocate(size_t bytes);
  void device_release(void *ptr);
  // Strict: runs every stream's work that may run now (in order; see above).
  void progress_all();
  bool progress(FakeStream &stream);
  bool strict_ = false;
  unsigned char *region_ = nullptr;  // strict: the reserved device address range
  size_t region_bytes_ = 0, region_used_ = 0;
  struct Allocation {
    size_t bytes = 0;
    unsigned char *backing = nullptr;
  };
  std::map<const unsigned char *, Allocation> allocations_;  // strict: live device memory by address
  std::vector<std::pair<int, std::string>> misuses_;

  mutable std::mutex mutex_;
  int devices_;
  int device_count_error_ = kCudaSuccess;
  bool collectives_in_progress_ = false;
  std::vector<FakeCall> calls_;
  std::map<std::string, Clique *> pending_inits_;
  std::vector<std::unique_ptr<Clique>> cliques_;
  std::vector<std::unique_ptr<FakeComm>> comms_;
  std::vector<std::unique_ptr<FakeStream>> streams_;
  std::map<int, int> injected_;  // rank -> NCCL code
  unsigned next_id_ = 1;
};

}  // namespace xffl::test

#endif
