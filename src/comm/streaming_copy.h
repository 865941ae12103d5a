// The copies of the rounds on one host (ucx/host_collectives.h) that memcpy does not make.
//
// A copy whose stores bypass the cache, for a collective's large output: x86-64's non-temporal
// stores (SSE2, every x86-64 CPU has them), then a store fence, so that the copy is complete and
// visible to every thread before the call returns. A plain memcpy of a buffer larger than the
// cache first reads every line of the destination it writes ("read for ownership") and evicts
// what the collective still needs (the segment's parts, ucx/host_collectives.h); these stores do
// neither. The caller's next read of the output then comes from memory, which a buffer of this
// size (algorithm_choice::host_stream_output_from) would not have stayed in a core's cache for
// anyway. Elsewhere (aarch64, or a compiler without the intrinsics) it is memcpy.

#ifndef XFFL_SRC_COMM_STREAMING_COPY_H
#define XFFL_SRC_COMM_STREAMING_COPY_H

#include <cstddef>

namespace xffl::comm {

// Copies `bytes` from `from` to `to`; the two must not overlap. Any alignment and length.
void copy_streaming(void *to, const void *from, size_t bytes);

// copy_streaming when `streaming`, else memcpy: how the rounds copy into the caller's output, by its
// size (algorithm_choice::host_stream_output_from).
void copy_to_output(void *to, const void *from, size_t bytes, bool streaming);

}  // namespace xffl::comm

#endif
