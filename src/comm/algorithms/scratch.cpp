#include "comm/algorithms/scratch.h"

namespace xffl::comm::algorithms {

namespace {
constexpr size_t kAlignment = 64;  // a cache line: vectorised loops start aligned
size_t rounded(size_t bytes) { return (bytes + kAlignment - 1) / kAlignment * kAlignment; }
}  // namespace

unsigned char *ScratchStack::push(size_t bytes) {
  const size_t need = rounded(bytes);
  if (overflow_.empty() && used_ + need <= block_.size()) {
    unsigned char *data = block_.data() + used_;
    used_ += need;
    return data;
  }
  if (used_ == 0 && overflow_.empty() && need <= kRetainedBytes) {  // grow while nothing is held
    block_ = HugePageBlock(need);
    used_ = need;
    return block_.data();
  }
  overflow_.emplace_back(need);
  return overflow_.back().data();
}

void ScratchStack::pop(unsigned char *data, size_t bytes) {
  if (!overflow_.empty() && overflow_.back().data() == data) {
    overflow_.pop_back();
    return;
  }
  used_ -= rounded(bytes);
}

Scratch::Scratch(PointToPoint &p2p, size_t bytes) : stack_(p2p.scratch_stack()), bytes_(bytes) {
  if (stack_) {
    data_ = stack_->push(bytes);
  } else {
    owned_.reset(new unsigned char[bytes ? bytes : 1]);
    data_ = owned_.get();
  }
}

Scratch::~Scratch() {
  if (stack_) stack_->pop(data_, bytes_);
}

}  // namespace xffl::comm::algorithms
