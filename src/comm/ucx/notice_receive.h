// Receiving one fixed-size notice from UCX's unexpected queue: the mismatch notices of call_check
// and the revoke notices of revocation travel as one small tagged message of a known struct, sent
// without a matching receive posted. Taking one off the queue is the same for both: probe the tag,
// receive a message of exactly the struct's size (one of another size is received into scratch and
// dropped, so it cannot block the queue), wait for the receive within a bound, and cancel it when
// the bound passes. Each caller then checks its own struct's magic.
#ifndef XFFL_SRC_COMM_UCX_NOTICE_RECEIVE_H
#define XFFL_SRC_COMM_UCX_NOTICE_RECEIVE_H

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <type_traits>

#include "comm/ucx/ucx_api.h"

namespace xffl::comm::ucx {

// Takes the oldest unexpected message matching (tag, mask) that is exactly `size` bytes into
// `buffer` and returns true; false when no such message is queued. Messages of another size, and
// receives that fail or do not complete within `bound` (then cancelled), are dropped and the next
// message is tried. `buffer` holds garbage when false is returned.
bool receive_fixed_size(ucp_worker_h worker, uint64_t tag, uint64_t mask, void *buffer, size_t size,
                        std::chrono::milliseconds bound);

// The oldest notice of type T queued under (tag, mask), as receive_fixed_size takes it; nullopt
// when none is there. T is a plain struct sent byte for byte (its magic is the caller's to check).
template <class T>
std::optional<T> receive_notice(ucp_worker_h worker, uint64_t tag, uint64_t mask, std::chrono::milliseconds bound) {
  static_assert(std::is_trivially_copyable_v<T>, "a notice travels as its bytes");
  T notice;
  if (!receive_fixed_size(worker, tag, mask, &notice, sizeof notice, bound)) return std::nullopt;
  return notice;
}

}  // namespace xffl::comm::ucx

#endif
