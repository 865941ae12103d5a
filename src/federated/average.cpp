#include "federated/average.h"

#include <cstring>
#include <vector>

#include "comm/dtype.h"
#include "federated/scale.h"

namespace xffl::federated {

namespace {
// Buckets of _many: large enough to amortise a collective's latency, small enough to keep the staging
// copy cheap.
constexpr size_t kBucketBytes = size_t{16} << 20;
}  // namespace

void average(const Roles &roles, void *buf, size_t count, xffl_dtype_t dtype, void *stream) {
  if (!roles.replica) {  // FLAT, or no HSDP: every rank averages over its FEDERATED group
    if (roles.weight_factor != 1.0) scale(buf, count, dtype, roles.weight_factor);
    roles.federated->allreduce(buf, buf, count, dtype, XFFL_AVG, stream);
    return;
  }
  // HIERARCHICAL: senders average across groups and relay the result through their replica group as
  // it becomes final, so non-sender replicas never drift (xFFL's asymmetric path never broadcasts).
  if (roles.is_sender) {
    if (roles.weight_factor != 1.0) scale(buf, count, dtype, roles.weight_factor);
    roles.federated->allreduce_and_relay(buf, count, dtype, XFFL_AVG, *roles.replica, roles.sender_index, stream);
  } else {
    roles.replica->relay_receive(buf, count, dtype, XFFL_AVG, roles.sender_index, roles.federated_groups,
                                 roles.federated_rank, stream);
  }
}

void average_many(const Roles &roles, void *const *bufs, const size_t *counts, size_t n, xffl_dtype_t dtype,
                  void *stream) {
  const size_t bucket_bytes = roles.device_memory ? 0 : kBucketBytes;
  const size_t element = comm::dtype_size(dtype);
  std::vector<unsigned char> bucket;
  std::vector<size_t> members;  // indices of the buffers in the current bucket
  auto flush = [&]() {
    if (members.empty()) return;
    average(roles, bucket.data(), bucket.size() / element, dtype, stream);
    size_t offset = 0;
    for (size_t i : members) {
      std::memcpy(bufs[i], bucket.data() + offset, counts[i] * element);
      offset += counts[i] * element;
    }
    bucket.clear();
    members.clear();
  };
  for (size_t i = 0; i < n; ++i) {
    const size_t bytes = counts[i] * element;
    if (bytes == 0) continue;
    if (bytes >= bucket_bytes) {  // big enough on its own: no copy
      average(roles, bufs[i], counts[i], dtype, stream);
      continue;
    }
    if (bucket.size() + bytes > bucket_bytes) flush();
    const unsigned char *source = static_cast<const unsigned char *>(bufs[i]);
    bucket.insert(bucket.end(), source, source + bytes);
    members.push_back(i);
  }
  flush();
}

}  // namespace xffl::federated
