#include "federated/average.h"

#include <cstring>
#include <vector>

#include "comm/dtype.h"
#include "federated/scale.h"

namespace xffl::federated {

void average(const Roles &roles, void *buf, size_t count, xffl_dtype_t dtype, void *stream) {
  const bool crosses = roles.strategy == XFFL_FEDAVG_FLAT || !roles.replica || roles.is_sender;
  if (crosses) {
    if (roles.weight_factor != 1.0) scale(buf, count, dtype, roles.weight_factor);
    roles.federated->allreduce(buf, buf, count, dtype, XFFL_AVG, stream);
  }
  // HIERARCHICAL with HSDP: each replica group takes its sender's result, so non-sender replicas never
  // drift (xFFL's asymmetric path skips this broadcast).
  if (roles.replica) roles.replica->broadcast(buf, count, dtype, roles.sender_index, stream);
}

void average_many(const Roles &roles, void *const *bufs, const size_t *counts, size_t n, xffl_dtype_t dtype,
                  void *stream, size_t bucket_bytes) {
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
