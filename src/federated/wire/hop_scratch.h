// Host memory the compressed WAN hop (wan_hop.h) keeps from one federated average to the next: this
// member's encoded bytes and every member's. Allocated afresh on every call, a large model's hop mapped
// and faulted in new pages each time (the kernel zeroing them was 45% of the CPU of a 128 MiB
// int8_block average on 8 ranks). It grows to the largest hop so far, on huge pages where the kernel
// allows, and is given back when the layout is unset or the state destroyed: (G + 1) x the encoded size
// of the largest buffer (or bucket) averaged, on crossing ranks only (int8_block with G = 2: 0.76 x that
// buffer's f32 bytes).
#ifndef XFFL_SRC_FEDERATED_WIRE_HOP_SCRATCH_H
#define XFFL_SRC_FEDERATED_WIRE_HOP_SCRATCH_H

#include <cstddef>

#include "comm/huge_pages.h"

namespace xffl::federated::wire {

class HopScratch {
 public:
  // At least `bytes`, uninitialised; valid until the next call. Throws std::bad_alloc.
  unsigned char *get(size_t bytes) {
    if (block_.size() < bytes) {
      block_ = comm::HugePageBlock();  // the old block goes first: never both at once
      block_ = comm::HugePageBlock(bytes);
    }
    return block_.data();
  }
  void release() { block_ = comm::HugePageBlock(); }
  size_t bytes() const { return block_.size(); }

 private:
  comm::HugePageBlock block_;
};

}  // namespace xffl::federated::wire

#endif
