#include "comm/ucx/send_staging.h"

#include <cstring>

namespace xffl::comm::ucx {

void *SendStaging::stage(const void *data, size_t bytes) {
  if (bytes < kMinBytes || bytes > kSlotBytes) return nullptr;
  if (free_.empty()) {
    if (slots() >= kMaxSlots) return nullptr;
    blocks_.emplace_back(kHugePageBytes);
    for (size_t i = 0; i < kSlotsPerBlock; ++i) free_.push_back(blocks_.back().data() + i * kSlotBytes);
  }
  void *slot = free_.back();
  free_.pop_back();
  std::memcpy(slot, data, bytes);
  return slot;
}

void SendStaging::release(void *slot) {
  if (slot) free_.push_back(slot);
}

}  // namespace xffl::comm::ucx
