#include "comm/huge_pages.h"

#include <sys/mman.h>

#include <cstdlib>
#include <new>
#include <utility>

namespace xffl::comm {

HugePageBlock::HugePageBlock(size_t bytes) {
  const size_t rounded = (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
  if (rounded == 0) return;
  void *memory = nullptr;
  if (posix_memalign(&memory, kHugePageBytes, rounded) != 0) throw std::bad_alloc();
  (void)madvise(memory, rounded, MADV_HUGEPAGE);  // a hint: without THP the block is still usable
  data_ = static_cast<unsigned char *>(memory);
  size_ = rounded;
}

HugePageBlock::~HugePageBlock() { std::free(data_); }

HugePageBlock::HugePageBlock(HugePageBlock &&other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

HugePageBlock &HugePageBlock::operator=(HugePageBlock &&other) noexcept {
  if (this != &other) {
    std::free(data_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

}  // namespace xffl::comm
