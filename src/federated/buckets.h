// Several buffers averaged as few large ones: a collective's latency is paid per bucket, not per buffer.
#ifndef XFFL_SRC_FEDERATED_BUCKETS_H
#define XFFL_SRC_FEDERATED_BUCKETS_H

#include <cstddef>
#include <functional>

#include "comm/communicator.h"
#include "xffl/types.h"

namespace xffl::federated {

// Buffers smaller than a bucket (16 MiB) are coalesced into buckets (copied in, averaged by
// average_one, copied back exactly) in `memory`'s memory (host, or device memory with NCCL, copies
// ordered on the stream); larger ones go to average_one in place. Empty buffers are skipped. Every
// member calls average_one with the same counts in the same order.
void average_in_buckets(comm::Communicator &memory, void *const *bufs, const size_t *counts, size_t n,
                        xffl_dtype_t dtype, void *stream, const std::function<void(void *buf, size_t count)> &average_one);

}  // namespace xffl::federated

#endif
