#include "federated/average.h"

#include <vector>

#include "comm/dtype.h"
#include "common/error.h"

namespace xffl::federated {

namespace {
// Buckets of _many: large enough to amortise a collective's latency, small enough to keep the staging
// copy cheap.
constexpr size_t kBucketBytes = size_t{16} << 20;
}  // namespace

namespace {

// On every rank before any message: were only the senders to refuse (they alone scale), the others
// would wait for a relay that never comes until the timeout.
void check_weighted_dtype(const Roles &roles, xffl_dtype_t dtype) {
  if (roles.weighted && !comm::is_floating(dtype))
    fail(XFFL_EINVAL, "weighted federated averaging needs a floating-point dtype, not ", comm::dtype_name(dtype),
         " (xffl_set_federated_weights(st, NULL, 0) returns to the plain mean for integer data)");
}

}  // namespace

void average(const Roles &roles, void *buf, size_t count, xffl_dtype_t dtype, void *stream) {
  check_weighted_dtype(roles, dtype);
  if (!roles.replica) {  // FLAT, or no HSDP: every rank averages over its FEDERATED group
    roles.federated->allreduce_scaled(buf, count, dtype, XFFL_AVG, roles.weight_factor, stream);
    return;
  }
  // HIERARCHICAL: senders average across groups and relay the result through their replica group as
  // it becomes final, so non-sender replicas never drift (xFFL's asymmetric path never broadcasts).
  if (roles.is_sender) {
    roles.federated->allreduce_and_relay(buf, count, dtype, XFFL_AVG, roles.weight_factor, *roles.replica,
                                         roles.sender_index, stream);
  } else {
    roles.replica->relay_receive(buf, count, dtype, XFFL_AVG, roles.sender_index, roles.federated_groups,
                                 roles.federated_rank, stream);
  }
}

namespace {

// The bucket of _many in the memory the federated communicator works on (host, or the device through
// the stream-ordered allocator), allocated at its first use and released on every path out.
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

void average_many(const Roles &roles, void *const *bufs, const size_t *counts, size_t n, xffl_dtype_t dtype,
                  void *stream) {
  check_weighted_dtype(roles, dtype);
  const size_t element = comm::dtype_size(dtype);
  // Bytes that go through the bucket: the scratch is no larger than they need.
  size_t small_bytes = 0;
  for (size_t i = 0; i < n; ++i)
    if (counts[i] * element < kBucketBytes) small_bytes += counts[i] * element;
  comm::Communicator &memory = *roles.federated;  // every rank has one (a group of one for non-senders)
  Bucket bucket(memory, stream);
  const size_t capacity = small_bytes < kBucketBytes ? small_bytes : kBucketBytes;
  size_t filled = 0;
  std::vector<size_t> members;  // indices of the buffers in the current bucket
  auto flush = [&]() {
    if (members.empty()) return;
    unsigned char *data = bucket.data(capacity);
    average(roles, data, filled / element, dtype, stream);
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
      average(roles, bufs[i], counts[i], dtype, stream);
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
