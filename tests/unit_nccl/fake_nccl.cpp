#include "fake_nccl.h"

#include "comm/half.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <deque>
#include <cstring>
#include <functional>

namespace xffl::test {

namespace {
thread_local int bound_rank = -1;
}

struct FakeNccl::FakeComm {
  Clique *clique = nullptr;  // null while a split is pending
  int index = 0;
  int rank = -1;  // bound rank of the creating thread
  long next_op = 0, next_split = 0;
  long awaiting_split = -1;  // the parent's split round this rank posted and waits for (as NCCL's parent does)
  bool dead = false;  // aborted or destroyed: NCCL has freed it, any further use is a misuse
  int finalize_polls = -1;  // >= 0 once finalized: async error says InProgress this many more times
  std::map<int, double> premul_ops;  // live PreMulSum operators of this rank's communicator
  int next_custom_op = 5;            // ncclNumOps: NCCL numbers user operators from here
};

struct FakeNccl::Clique {
  struct Contribution {
    const void *send = nullptr;
    void *recv = nullptr;
    double premul = 1.0;  // this member's PreMulSum scalar
  };
  struct Op {
    FakeCall call;
    std::vector<Contribution> parts;
    int arrived = 0;
    bool done = false;
  };
  struct SplitEntry {
    int color = 0, key = 0;
    FakeComm *child = nullptr;
    Comm *out = nullptr;  // the caller's pointer: NCCL writes the child there when the split completes
    bool posted = false;
    bool published = false;
  };
  int size = 0;
  int joined = 0;
  std::vector<FakeComm *> members;
  std::map<long, Op> ops;
  std::map<long, std::vector<SplitEntry>> splits;
  bool ready() const { return joined == size; }
};

struct FakeNccl::FakeStream {
  std::vector<std::pair<Clique *, long>> pending;
  std::vector<void *> frees;  // free_async'ed, released once the stream is idle
  // Strict: the stream's work in order. A copy (clique null) runs at the head; a collective joins its
  // clique's op at the head (its contribution is read from then on) and leaves once the op is done.
  struct Work {
    Clique *clique = nullptr;
    long seq = 0;
    int index = 0;
    Clique::Contribution part;
    bool joined = false;
    void *dst = nullptr;
    const void *src = nullptr;
    size_t bytes = 0;
  };
  std::deque<Work> queue;
};

namespace {

template <typename T>
T combine(T a, T b, int op) {
  switch (op) {
    case kNcclProd: return a * b;
    case kNcclMax: return std::max(a, b);
    case kNcclMin: return std::min(a, b);
    default: return a + b;
  }
}

template <typename T>
void reduce_into(const std::vector<FakeNccl::Clique::Contribution> &parts, size_t offset, size_t count, int op,
                 T *out) {
  for (size_t i = 0; i < count; ++i) {
    auto input = [&](size_t p) {
      const T value = static_cast<const T *>(parts[p].send)[offset + i];
      return parts[p].premul == 1.0 ? value : static_cast<T>(static_cast<double>(value) * parts[p].premul);
    };
    T acc = input(0);
    for (size_t p = 1; p < parts.size(); ++p) acc = combine(acc, input(p), op);
    if (op == kNcclAvg) acc = static_cast<T>(acc / static_cast<T>(parts.size()));
    out[i] = acc;
  }
}

// f16 and bf16 as NCCL reduces them: each input (times its PreMulSum scalar) widened to f32, the
// sum rounded back to 16 bits.
void reduce_half(const std::vector<FakeNccl::Clique::Contribution> &parts, size_t offset, size_t count, int op,
                 bool brain, uint16_t *out) {
  const auto widen = [brain](uint16_t h) { return brain ? xffl::comm::bf16_to_f32(h) : xffl::comm::f16_to_f32(h); };
  const auto narrow = [brain](float f) { return brain ? xffl::comm::f32_to_bf16(f) : xffl::comm::f32_to_f16(f); };
  for (size_t i = 0; i < count; ++i) {
    auto input = [&](size_t p) {
      const float value = widen(static_cast<const uint16_t *>(parts[p].send)[offset + i]);
      return static_cast<float>(value * parts[p].premul);
    };
    float acc = input(0);
    for (size_t p = 1; p < parts.size(); ++p) acc = combine(acc, input(p), op);
    if (op == kNcclAvg) acc /= static_cast<float>(parts.size());
    out[i] = narrow(acc);
  }
}

// One reduction of `count` elements at `offset` of every part into out, in the collective's type.
void reduce_typed(const std::vector<FakeNccl::Clique::Contribution> &parts, size_t offset, size_t count, int op,
                  int type, void *out) {
  switch (type) {
    case kNcclFloat32: return reduce_into(parts, offset, count, op, static_cast<float *>(out));
    case kNcclFloat64: return reduce_into(parts, offset, count, op, static_cast<double *>(out));
    case kNcclInt32: return reduce_into(parts, offset, count, op, static_cast<int32_t *>(out));
    case kNcclInt64: return reduce_into(parts, offset, count, op, static_cast<int64_t *>(out));
    case kNcclInt8: return reduce_into(parts, offset, count, op, static_cast<int8_t *>(out));
    case kNcclUint8: return reduce_into(parts, offset, count, op, static_cast<uint8_t *>(out));
    case kNcclFloat16: return reduce_half(parts, offset, count, op, false, static_cast<uint16_t *>(out));
    case kNcclBfloat16: return reduce_half(parts, offset, count, op, true, static_cast<uint16_t *>(out));
    default: std::abort();  // a type xffl never passes
  }
}

size_t type_size(int type) {
  switch (type) {
    case kNcclInt8: case kNcclUint8: return 1;
    case kNcclFloat16: case kNcclBfloat16: return 2;
    case kNcclInt32: case kNcclUint32: case kNcclFloat32: return 4;
    default: return 8;
  }
}

void execute(FakeNccl::Clique::Op &op) {
  const FakeCall &c = op.call;
  const size_t n = op.parts.size();
  const size_t bytes = c.count * type_size(c.type);
  if (c.name == "broadcast") {
    for (auto &part : op.parts)
      if (part.recv != op.parts[static_cast<size_t>(c.root)].send)
        std::memmove(part.recv, op.parts[static_cast<size_t>(c.root)].send, bytes);
  } else if (c.name == "allgather") {
    std::vector<std::vector<unsigned char>> inputs;
    for (auto &part : op.parts)
      inputs.emplace_back(static_cast<const unsigned char *>(part.send), static_cast<const unsigned char *>(part.send) + bytes);
    for (auto &part : op.parts)
      for (size_t i = 0; i < n; ++i) std::memcpy(static_cast<unsigned char *>(part.recv) + i * bytes, inputs[i].data(), bytes);
  } else if (c.name == "allreduce") {
    std::vector<unsigned char> result(bytes);
    reduce_typed(op.parts, 0, c.count, c.op, c.type, result.data());
    for (auto &part : op.parts) std::memcpy(part.recv, result.data(), bytes);
  } else if (c.name == "reduce_scatter") {
    std::vector<std::vector<unsigned char>> results(n, std::vector<unsigned char>(bytes));
    for (size_t r = 0; r < n; ++r) reduce_typed(op.parts, r * c.count, c.count, c.op, c.type, results[r].data());
    for (size_t r = 0; r < n; ++r) std::memcpy(op.parts[r].recv, results[r].data(), bytes);
  }
  op.done = true;
}

}  // namespace

FakeNccl::FakeNccl(int devices) : devices_(devices) {}
FakeNccl::~FakeNccl() {
  for (auto &stream : streams_)
    for (void *ptr : stream->frees) strict_ ? device_release(ptr) : std::free(ptr);
  for (auto &[base, allocation] : allocations_) std::free(allocation.backing);
  if (region_) munmap(region_, region_bytes_);
}

void FakeNccl::set_strict(bool on) {
  std::lock_guard<std::mutex> lock(mutex_);
  strict_ = on;
  if (!on || region_) return;
  // Address space only: no access, no memory behind it. The host touching it faults, as a CPU touching
  // GPU memory would (or read garbage: never what the GPU holds).
  region_bytes_ = size_t{1} << 32;
  void *reserved = mmap(nullptr, region_bytes_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (reserved == MAP_FAILED) std::abort();
  region_ = static_cast<unsigned char *>(reserved);
}

bool FakeNccl::is_device(const void *ptr) const {
  const auto *p = static_cast<const unsigned char *>(ptr);
  return region_ && p >= region_ && p < region_ + region_bytes_;
}

void *FakeNccl::backing(const void *ptr, size_t bytes, const char *call) {
  if (!is_device(ptr)) return const_cast<void *>(ptr);
  const auto *p = static_cast<const unsigned char *>(ptr);
  auto found = allocations_.upper_bound(p);
  if (found != allocations_.begin()) {
    --found;
    const size_t offset = static_cast<size_t>(p - found->first);
    if (offset + bytes <= found->second.bytes) return found->second.backing + offset;
  }
  misuses_.emplace_back(bound_rank, std::string(call) + " on device memory that is not inside a live allocation");
  return nullptr;
}

void *FakeNccl::device_allocate(size_t bytes) {
  const size_t rounded = (std::max<size_t>(bytes, 1) + 255) / 256 * 256;
  if (region_used_ + rounded > region_bytes_) return nullptr;
  unsigned char *address = region_ + region_used_;  // never reused: a stale pointer stays invalid
  region_used_ += rounded;
  auto *memory = static_cast<unsigned char *>(std::calloc(1, rounded));
  if (!memory) return nullptr;
  allocations_[address] = Allocation{bytes, memory};
  return address;
}

void FakeNccl::device_release(void *ptr) {
  auto found = allocations_.find(static_cast<const unsigned char *>(ptr));
  if (found == allocations_.end()) {
    misuses_.emplace_back(bound_rank, "freeing device memory that is not a live allocation's start");
    return;
  }
  std::free(found->second.backing);
  allocations_.erase(found);
}

bool FakeNccl::progress(FakeStream &stream) {
  bool moved = false;
  while (!stream.queue.empty()) {
    FakeStream::Work &work = stream.queue.front();
    if (!work.clique) {
      if (work.bytes) std::memmove(work.dst, work.src, work.bytes);
      stream.queue.pop_front();
      moved = true;
      continue;
    }
    Clique::Op &op = work.clique->ops[work.seq];
    if (!work.joined) {
      work.joined = true;
      moved = true;
      if (!op.done) {  // an abort may have ended it first
        op.parts[static_cast<size_t>(work.index)] = work.part;
        if (++op.arrived == work.clique->size) execute(op);
      }
    }
    if (!op.done) break;
    stream.queue.pop_front();
    moved = true;
  }
  return moved;
}

void FakeNccl::progress_all() {
  for (bool moved = true; moved;) {
    moved = false;
    for (auto &stream : streams_) moved = progress(*stream) || moved;
  }
}

void FakeNccl::bind_thread(int rank) { bound_rank = rank; }

void FakeNccl::inject_async_error(int rank, int nccl_code) {
  std::lock_guard<std::mutex> lock(mutex_);
  injected_[rank] = nccl_code;
}

std::vector<FakeCall> FakeNccl::calls() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return calls_;
}

int FakeNccl::count(const std::string &name, int rank) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<int>(std::count_if(calls_.begin(), calls_.end(),
                                        [&](const FakeCall &c) { return c.name == name && c.rank == rank; }));
}

namespace {
thread_local int thread_device = 0;  // CUDA's current device is per thread
}  // namespace

bool FakeNccl::freed(const FakeComm *comm, const char *call) {
  if (!comm || !comm->dead) return false;
  misuses_.emplace_back(bound_rank, std::string(call) + " on a communicator that ncclCommAbort or ncclCommDestroy freed");
  return true;
}

std::vector<std::pair<int, std::string>> FakeNccl::misuses() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return misuses_;
}

void FakeNccl::record(FakeCall call) {
  call.rank = bound_rank;
  call.device = thread_device;
  calls_.push_back(std::move(call));
}

int FakeNccl::device_count(int *count) {
  if (device_count_error_ != kCudaSuccess) return device_count_error_;
  *count = devices_;
  return devices_ > 0 ? kCudaSuccess : kCudaErrorNoDevice;
}

int FakeNccl::current_device() { return thread_device; }

int FakeNccl::set_device(int device) {
  std::lock_guard<std::mutex> lock(mutex_);
  FakeCall call{"set_device"};
  call.key = device;
  record(call);
  if (device < 0 || device >= devices_) return 101;  // cudaErrorInvalidDevice
  thread_device = device;
  return kCudaSuccess;
}

int FakeNccl::get_device(int *device) {
  *device = thread_device;
  return kCudaSuccess;
}

int FakeNccl::stream_create(Stream *stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  streams_.push_back(std::make_unique<FakeStream>());
  *stream = streams_.back().get();
  record(FakeCall{"stream_create"});
  return kCudaSuccess;
}

int FakeNccl::stream_destroy(Stream stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  FakeCall call{"stream_destroy"};
  call.stream = stream;
  record(call);
  return kCudaSuccess;
}

int FakeNccl::stream_query(Stream stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto *fake = static_cast<FakeStream *>(stream);
  if (strict_) {
    progress_all();
    if (!fake->queue.empty()) return kCudaErrorNotReady;
  }
  auto &pending = fake->pending;
  pending.erase(std::remove_if(pending.begin(), pending.end(),
                               [](const auto &entry) { return entry.first->ops[entry.second].done; }),
                pending.end());
  if (!pending.empty()) return kCudaErrorNotReady;
  for (void *ptr : fake->frees) strict_ ? device_release(ptr) : std::free(ptr);
  fake->frees.clear();
  return kCudaSuccess;
}

int FakeNccl::copy_async(void *dst, const void *src, size_t bytes, Stream stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  FakeCall call{"copy"};
  call.count = bytes;
  call.stream = stream;
  record(call);
  if (strict_) {  // in stream order, between the backing memories (cudaMemcpyDefault: any direction)
    FakeStream::Work work;
    work.dst = backing(dst, bytes, "cudaMemcpyAsync");
    work.src = backing(src, bytes, "cudaMemcpyAsync");
    if (!work.dst || !work.src) return 1;  // cudaErrorInvalidValue
    work.bytes = bytes;
    static_cast<FakeStream *>(stream)->queue.push_back(work);
    progress_all();
    return kCudaSuccess;
  }
  std::memmove(dst, src, bytes);
  return kCudaSuccess;
}

int FakeNccl::device_alloc(void **ptr, size_t bytes) {
  if (strict_) {
    std::lock_guard<std::mutex> lock(mutex_);
    *ptr = device_allocate(bytes);
    return *ptr ? kCudaSuccess : 2;  // cudaErrorMemoryAllocation
  }
  *ptr = std::calloc(1, bytes);
  return *ptr ? kCudaSuccess : 2;  // cudaErrorMemoryAllocation
}

int FakeNccl::device_free(void *ptr) {
  std::lock_guard<std::mutex> lock(mutex_);
  record(FakeCall{"device_free"});
  // cudaFree synchronizes the device: behind a collective that may never finish, it would block.
  for (const auto &stream : streams_)
    for (const auto &[clique, seq] : stream->pending)
      if (!clique->ops[seq].done) {
        misuses_.emplace_back(bound_rank, "cudaFree while a collective is pending on a stream (it would block)");
        break;
      }
  if (strict_) {
    if (ptr) device_release(ptr);
    return kCudaSuccess;
  }
  std::free(ptr);
  return kCudaSuccess;
}

int FakeNccl::alloc_async(void **ptr, size_t bytes, Stream stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  FakeCall call{"alloc_async"};
  call.count = bytes;
  call.stream = stream;
  record(call);
  *ptr = strict_ ? device_allocate(bytes) : std::calloc(1, bytes ? bytes : 1);
  return *ptr ? kCudaSuccess : 2;  // cudaErrorMemoryAllocation
}

int FakeNccl::free_async(void *ptr, Stream stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  FakeCall call{"free_async"};
  call.stream = stream;
  record(call);
  static_cast<FakeStream *>(stream)->frees.push_back(ptr);
  return kCudaSuccess;
}

int FakeNccl::host_alloc(void **ptr, size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  FakeCall call{"host_alloc"};
  call.count = bytes;
  record(call);
  *ptr = std::calloc(1, bytes ? bytes : 1);
  return *ptr ? kCudaSuccess : 2;  // cudaErrorMemoryAllocation
}

int FakeNccl::host_free(void *ptr) {
  std::free(ptr);
  return kCudaSuccess;
}

std::string FakeNccl::cuda_error_string(int code) {
  switch (code) {
    case kCudaErrorNoDevice: return "cudaErrorNoDevice: no CUDA-capable device is detected";
    case kCudaErrorInsufficientDriver:
      return "cudaErrorInsufficientDriver: CUDA driver version is insufficient for CUDA runtime version";
    default: return "cudaError " + std::to_string(code);
  }
}

int FakeNccl::get_unique_id(UniqueId *id) {
  std::lock_guard<std::mutex> lock(mutex_);
  *id = UniqueId{};
  const unsigned value = next_id_++;
  std::memcpy(id->bytes, &value, sizeof value);
  record(FakeCall{"get_unique_id"});
  return kNcclSuccess;
}

int FakeNccl::comm_init_rank(Comm *comm, int nranks, const UniqueId &id, int rank) {
  std::lock_guard<std::mutex> lock(mutex_);
  FakeCall call{"init"};
  call.size = nranks;
  call.key = rank;
  record(call);
  const std::string key(reinterpret_cast<const char *>(id.bytes), sizeof id.bytes);
  Clique *&clique = pending_inits_[key];
  if (!clique) {
    cliques_.push_back(std::make_unique<Clique>());
    clique = cliques_.back().get();
    clique->size = nranks;
    clique->members.assign(static_cast<size_t>(nranks), nullptr);
  }
  if (clique->size != nranks || rank < 0 || rank >= nranks || clique->members[static_cast<size_t>(rank)])
    return kNcclInvalidArgument;
  comms_.push_back(std::make_unique<FakeComm>());
  FakeComm *made = comms_.back().get();
  made->clique = clique;
  made->index = rank;
  made->rank = bound_rank;
  clique->members[static_cast<size_t>(rank)] = made;
  ++clique->joined;
  *comm = made;
  return kNcclInProgress;
}

int FakeNccl::comm_split(Comm comm, int color, int key, Comm *child) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto *parent = static_cast<FakeComm *>(comm);
  FakeCall call{"split"};
  call.color = color;
  call.key = key;
  record(call);
  // As NCCL 2.28 (init.cc): "*newcomm should be NCCL_COMM_NULL until comm split fully complete".
  *child = nullptr;
  if (freed(parent, "ncclCommSplit")) return kNcclInvalidArgument;
  if (!parent->clique || !parent->clique->ready()) return kNcclInvalidUsage;
  Clique &clique = *parent->clique;
  parent->awaiting_split = parent->next_split;
  auto &round = clique.splits[parent->next_split++];
  round.resize(static_cast<size_t>(clique.size));
  auto &entry = round[static_cast<size_t>(parent->index)];
  entry.color = color;
  entry.key = key;
  entry.posted = true;
  if (color != kSplitNoColor) {
    comms_.push_back(std::make_unique<FakeComm>());
    entry.child = comms_.back().get();
    entry.child->rank = bound_rank;
    entry.out = child;
  }
  if (std::all_of(round.begin(), round.end(), [](const auto &e) { return e.posted; })) {
    std::map<int, std::vector<std::pair<std::pair<int, int>, FakeComm *>>> by_color;
    for (size_t i = 0; i < round.size(); ++i)
      if (round[i].color != kSplitNoColor)
        by_color[round[i].color].push_back({{round[i].key, static_cast<int>(i)}, round[i].child});
    for (auto &[c, members] : by_color) {
      std::sort(members.begin(), members.end(), [](const auto &a, const auto &b) { return a.first < b.first; });
      cliques_.push_back(std::make_unique<Clique>());
      Clique *made = cliques_.back().get();
      made->size = made->joined = static_cast<int>(members.size());
      for (size_t i = 0; i < members.size(); ++i) {
        members[i].second->clique = made;
        members[i].second->index = static_cast<int>(i);
        made->members.push_back(members[i].second);
      }
    }
  }
  return kNcclInProgress;
}

int FakeNccl::comm_get_async_error(Comm comm, int *async_error) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto *fake = static_cast<FakeComm *>(comm);
  if (freed(fake, "ncclCommGetAsyncError")) return kNcclInvalidArgument;
  if (auto found = injected_.find(fake->rank); found != injected_.end()) {
    *async_error = found->second;
    injected_.erase(found);
    return kNcclSuccess;
  }
  if (fake->finalize_polls >= 0) {  // flushing after ncclCommFinalize
    *async_error = fake->finalize_polls > 0 ? kNcclInProgress : kNcclSuccess;
    if (fake->finalize_polls > 0) --fake->finalize_polls;
    return kNcclSuccess;
  }
  *async_error = fake->clique && fake->clique->ready() ? kNcclSuccess : kNcclInProgress;
  if (fake->awaiting_split >= 0 && fake->clique) {
    auto &round = fake->clique->splits[fake->awaiting_split];
    if (std::all_of(round.begin(), round.end(), [](const auto &e) { return e.posted; })) {
      // The split is complete: its child appears in the caller's pointer only now, as NCCL's group
      // thread stores it there; progress was reported on the parent until then.
      auto &mine = round[static_cast<size_t>(fake->index)];
      if (mine.out && !mine.published) *mine.out = mine.child;
      mine.published = true;
      fake->awaiting_split = -1;
    } else {
      *async_error = kNcclInProgress;
    }
  }
  return kNcclSuccess;
}

int FakeNccl::comm_finalize(Comm comm) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto *fake = static_cast<FakeComm *>(comm);
  record(FakeCall{"finalize"});
  if (freed(fake, "ncclCommFinalize")) return kNcclInvalidArgument;
  // Nonblocking: the flush is in progress for a while, reported through ncclCommGetAsyncError.
  fake->finalize_polls = 2;
  return kNcclInProgress;
}

int FakeNccl::comm_destroy(Comm comm) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto *fake = static_cast<FakeComm *>(comm);
  record(FakeCall{"destroy"});
  if (freed(fake, "ncclCommDestroy")) return kNcclInvalidArgument;
  if (fake->finalize_polls != 0) {
    misuses_.emplace_back(bound_rank, "ncclCommDestroy before ncclCommFinalize completed");
  }
  fake->dead = true;
  return kNcclSuccess;
}

int FakeNccl::comm_abort(Comm comm) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto *fake = static_cast<FakeComm *>(comm);
  record(FakeCall{"abort"});
  if (freed(fake, "ncclCommAbort")) return kNcclInvalidArgument;
  fake->dead = true;
  // Aborting ends the communicator's kernels: its pending work no longer keeps streams busy.
  if (fake->clique)
    for (auto &[seq, op] : fake->clique->ops) op.done = true;
  if (strict_) progress_all();
  return kNcclSuccess;
}

int FakeNccl::red_op_create_pre_mul_sum(int *op, const void *scalar, int type, Comm comm) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto *fake = static_cast<FakeComm *>(comm);
  FakeCall call{"premul_create"};
  call.type = type;
  if (freed(fake, "ncclRedOpCreatePreMulSum")) return kNcclInvalidArgument;
  if (type == kNcclFloat32) call.scalar = *static_cast<const float *>(scalar);
  if (type == kNcclFloat64) call.scalar = *static_cast<const double *>(scalar);
  if (type == kNcclFloat16) call.scalar = xffl::comm::f16_to_f32(*static_cast<const uint16_t *>(scalar));
  if (type == kNcclBfloat16) call.scalar = xffl::comm::bf16_to_f32(*static_cast<const uint16_t *>(scalar));
  call.op = fake->next_custom_op++;
  record(call);
  fake->premul_ops[call.op] = call.scalar;
  *op = call.op;
  return kNcclSuccess;
}

int FakeNccl::red_op_destroy(int op, Comm comm) {
  std::lock_guard<std::mutex> lock(mutex_);
  FakeCall call{"premul_destroy"};
  call.op = op;
  record(call);
  if (freed(static_cast<FakeComm *>(comm), "ncclRedOpDestroy")) return kNcclInvalidArgument;
  return static_cast<FakeComm *>(comm)->premul_ops.erase(op) ? kNcclSuccess : kNcclInvalidArgument;
}

int FakeNccl::enqueue(const FakeCall &call, const void *send, void *recv, FakeComm *comm, Stream stream) {
  record(call);
  if (freed(comm, call.name.c_str())) return kNcclInvalidArgument;
  if (!comm || !comm->clique || !comm->clique->ready()) return kNcclInvalidUsage;
  double premul = 1.0;
  if (call.op >= kNcclAvg + 1) {  // a user operator: only this communicator's live PreMulSums exist
    auto found = comm->premul_ops.find(call.op);
    if (found == comm->premul_ops.end()) return kNcclInvalidArgument;
    premul = found->second;
  }
  Clique &clique = *comm->clique;
  FakeStream::Work work;  // strict: this member's part, queued on its stream
  if (strict_) {  // device memory only (checked before the call takes its place in the communicator)
    const size_t bytes = call.count * type_size(call.type);
    const size_t send_bytes = call.name == "reduce_scatter" ? bytes * static_cast<size_t>(clique.size) : bytes;
    const size_t recv_bytes = call.name == "allgather" ? bytes * static_cast<size_t>(clique.size) : bytes;
    if ((send && !is_device(send)) || !is_device(recv)) {
      misuses_.emplace_back(bound_rank, call.name + " on host memory (NCCL reads and writes device memory only)");
      return kNcclInvalidArgument;
    }
    work.part = Clique::Contribution{send ? backing(send, send_bytes, call.name.c_str()) : nullptr,
                                     backing(recv, recv_bytes, call.name.c_str()), premul};
    if ((send && !work.part.send) || !work.part.recv) return kNcclInvalidArgument;
  }
  const long seq = comm->next_op++;
  Clique::Op &op = clique.ops[seq];
  if (op.parts.empty()) {
    op.parts.resize(static_cast<size_t>(clique.size));
    op.call = call;
  }
  if (strict_) {  // read once the work before it on the stream is done
    work.clique = &clique;
    work.seq = seq;
    work.index = comm->index;
    static_cast<FakeStream *>(stream)->pending.push_back({&clique, seq});
    static_cast<FakeStream *>(stream)->queue.push_back(work);
    progress_all();
    return collectives_in_progress_ ? kNcclInProgress : kNcclSuccess;
  }
  op.parts[static_cast<size_t>(comm->index)] = Clique::Contribution{send, recv, premul};
  static_cast<FakeStream *>(stream)->pending.push_back({&clique, seq});
  if (++op.arrived == clique.size) execute(op);
  return collectives_in_progress_ ? kNcclInProgress : kNcclSuccess;
}

int FakeNccl::all_reduce(const void *send, void *recv, size_t count, int type, int op, Comm comm, Stream stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  FakeCall call{"allreduce"};
  call.count = count;
  call.type = type;
  call.op = op;
  call.stream = stream;
  return enqueue(call, send, recv, static_cast<FakeComm *>(comm), stream);
}

int FakeNccl::broadcast(const void *send, void *recv, size_t count, int type, int root, Comm comm, Stream stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  FakeCall call{"broadcast"};
  call.count = count;
  call.type = type;
  call.root = root;
  call.stream = stream;
  return enqueue(call, send, recv, static_cast<FakeComm *>(comm), stream);
}

int FakeNccl::all_gather(const void *send, void *recv, size_t send_count, int type, Comm comm, Stream stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  FakeCall call{"allgather"};
  call.count = send_count;
  call.type = type;
  call.stream = stream;
  return enqueue(call, send, recv, static_cast<FakeComm *>(comm), stream);
}

int FakeNccl::reduce_scatter(const void *send, void *recv, size_t recv_count, int type, int op, Comm comm,
                             Stream stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  FakeCall call{"reduce_scatter"};
  call.count = recv_count;
  call.type = type;
  call.op = op;
  call.stream = stream;
  return enqueue(call, send, recv, static_cast<FakeComm *>(comm), stream);
}

std::string FakeNccl::nccl_error_string(int code, Comm) {
  switch (code) {
    case kNcclRemoteError: return "remote process exited or there was a network error";
    case kNcclSystemError: return "unhandled system error";
    case kNcclInvalidUsage: return "invalid usage";
    default: return "NCCL error " + std::to_string(code);
  }
}

}  // namespace xffl::test
