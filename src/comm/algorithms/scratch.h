// Uninitialised temporary memory for staging and widened copies (zeroing it would cost a pass over
// memory for nothing: every byte is written before it is read).
//
// A transport may lend a ScratchStack (PointToPoint::scratch_stack): memory kept from one collective
// to the next on huge pages, so a large allreduce neither maps nor faults in fresh pages on every
// call (8 MiB of ring staging was 2,048 page faults per call). Scratch objects live on the C++ stack,
// so they are released in the reverse order of their creation, which is all a ScratchStack needs.
#ifndef XFFL_SRC_COMM_ALGORITHMS_SCRATCH_H
#define XFFL_SRC_COMM_ALGORITHMS_SCRATCH_H

#include <cstddef>
#include <memory>
#include <vector>

#include "comm/algorithms/point_to_point.h"
#include "comm/huge_pages.h"

namespace xffl::comm::algorithms {

class ScratchStack {
 public:
  // Up to this much stays allocated between collectives; a larger need is met and then given back.
  static constexpr size_t kRetainedBytes = size_t{64} << 20;

  unsigned char *push(size_t bytes);
  // The last pushed region that is still held (LIFO).
  void pop(unsigned char *data, size_t bytes);
  size_t retained() const { return block_.size(); }

 private:
  HugePageBlock block_;
  size_t used_ = 0;
  std::vector<HugePageBlock> overflow_;  // needs met outside block_, newest last
};

class Scratch {
 public:
  // From the transport's ScratchStack when it lends one, else from the heap.
  Scratch(PointToPoint &p2p, size_t bytes);
  ~Scratch();
  Scratch(const Scratch &) = delete;
  Scratch &operator=(const Scratch &) = delete;
  unsigned char *data() { return data_; }

 private:
  ScratchStack *stack_;
  size_t bytes_;
  unsigned char *data_;
  std::unique_ptr<unsigned char[]> owned_;
};

}  // namespace xffl::comm::algorithms

#endif
