// Large sends to peers on this host leave from a copy on huge pages. UCX moves such a message with
// CMA: the receiver's process_vm_readv pins the sender's pages one at a time, and with the caller's
// 4 KiB pages that pinning costs more than copying the message once (allreduce on 2 ranks of one
// host, interleaved runs of 30 calls: 64 MiB 13.9-15.0 ms from the caller's pages, 10.9-11.1 ms from
// staged copies; 1 MiB 200-245 us against 133-162 us). Slots return to the pool when UCX reports
// their send complete; a slot whose send was abandoned may still be read by UCX and is never reused. A ring's all-gather sends run ahead of the receives its neighbour has
// posted, so a large collective holds many slots at once: up to kMaxSlots, then it sends from the
// caller's buffer. The slots stay allocated for the next collective: giving them back and faulting
// them in again costs a 64 MiB allreduce a quarter of its time (13.7 ms against 11.0).
#ifndef XFFL_SRC_COMM_UCX_SEND_STAGING_H
#define XFFL_SRC_COMM_UCX_SEND_STAGING_H

#include <cstddef>
#include <vector>

#include "comm/huge_pages.h"

namespace xffl::comm::ucx {

class SendStaging {
 public:
  static constexpr size_t kMinBytes = size_t{256} << 10;  // smaller ones go eager, or cost too little to pin
  static constexpr size_t kSlotBytes = size_t{1} << 20;   // the largest message staged (a ring chunk)
  static constexpr size_t kMaxSlots = 64;                  // 64 MiB per worker at most, kept for reuse

  // A slot holding a copy of data, or nullptr when bytes is outside [kMinBytes, kSlotBytes] or every
  // slot is in use (the caller then sends from its own buffer).
  void *stage(const void *data, size_t bytes);
  bool has_free_slot() const { return !free_.empty() || slots() < kMaxSlots; }
  // Its send completed. A slot whose send was abandoned is simply never released: UCX may still read
  // it, and its block lives as long as the worker.
  void release(void *slot);
  size_t slots() const { return blocks_.size() * kSlotsPerBlock; }

 private:
  static constexpr size_t kSlotsPerBlock = kHugePageBytes / kSlotBytes;
  std::vector<HugePageBlock> blocks_;
  std::vector<void *> free_;
};

}  // namespace xffl::comm::ucx

#endif
