#include "federated/buckets.h"

#include <vector>

#include "comm/dtype.h"

namespace xffl::federated {

namespace {

// Large enough to amortise a collective's latency, small enough to keep the staging copy cheap.
constexpr size_t kBucketBytes = size_t{16} << 20;

// The bucket in the memory the federated communicator works on (host, or the device through the
// stream-ordered allocator), allocated at its first use and released on every path out.
class Bucket {
 public:
  Bucket(comm::Communicator &memory, void *stream) : memory_(memory), stream_(stream) {}
  ~Bucket() { memory_.release(data_, stream_); }
  Bucket(const Bucket &) = delete;
  Bucket &operator=(const Bucket &) = delete;

  unsigned char *data(size_t capacity) {
    if (!data_) data_ = static_cast<unsigned char *>(memory_.allocate(capacity, stream_));
    return data_;
  }

 private:
  comm::Communicator &memory_;
  void *stream_;
  unsigned char *data_ = nullptr;
};

}  // namespace

void average_in_buckets(comm::Communicator &memory, void *const *bufs, const size_t *counts, size_t n,
                        xffl_dtype_t dtype, void *stream, const std::function<void(void *, size_t)> &average_one) {
  const size_t element = comm::dtype_size(dtype);
  // Bytes that go through the bucket: the scratch is no larger than they need.
  size_t small_bytes = 0;
  for (size_t i = 0; i < n; ++i)
    if (counts[i] * element < kBucketBytes) small_bytes += counts[i] * element;
  Bucket bucket(memory, stream);
  const size_t capacity = small_bytes < kBucketBytes ? small_bytes : kBucketBytes;
  size_t filled = 0;
  std::vector<size_t> members;  // indices of the buffers in the current bucket
  auto flush = [&]() {
    if (members.empty()) return;
    unsigned char *data = bucket.data(capacity);
    average_one(data, filled / element);
    size_t offset = 0;
    for (size_t i : members) {
      memory.copy(bufs[i], data + offset, counts[i] * element, stream);
      offset += counts[i] * element;
    }
    filled = 0;
    members.clear();
  };
  for (size_t i = 0; i < n; ++i) {
    const size_t bytes = counts[i] * element;
    if (bytes == 0) continue;
    if (bytes >= kBucketBytes) {  // big enough on its own: no copy
      average_one(bufs[i], counts[i]);
      continue;
    }
    if (filled + bytes > kBucketBytes) flush();
    memory.copy(bucket.data(capacity) + filled, bufs[i], bytes, stream);
    filled += bytes;
    members.push_back(i);
  }
  flush();
  memory.finish_copies(stream);  // the copies back out of the last bucket
}

}  // namespace xffl::federated
