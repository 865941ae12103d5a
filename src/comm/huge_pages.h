// Host memory that the kernel backs with transparent huge pages where it can (a 2 MiB-aligned block
// with madvise(MADV_HUGEPAGE); THP in "madvise" mode, Debian's default, needs exactly that). A CMA copy
// (process_vm_readv, how UCX moves large messages between processes of one host) pins the source one
// page at a time: one page per 2 MiB instead of one per 4 KiB is most of the cost of a large
// allreduce on one host. Where the kernel refuses, the block is ordinary memory.
#ifndef XFFL_SRC_COMM_HUGE_PAGES_H
#define XFFL_SRC_COMM_HUGE_PAGES_H

#include <cstddef>

namespace xffl::comm {

constexpr size_t kHugePageBytes = size_t{2} << 20;

class HugePageBlock {
 public:
  HugePageBlock() = default;
  // At least `bytes` (rounded up to whole huge pages); throws std::bad_alloc.
  explicit HugePageBlock(size_t bytes);
  ~HugePageBlock();
  HugePageBlock(HugePageBlock &&other) noexcept;
  HugePageBlock &operator=(HugePageBlock &&other) noexcept;
  HugePageBlock(const HugePageBlock &) = delete;
  HugePageBlock &operator=(const HugePageBlock &) = delete;

  unsigned char *data() const { return data_; }
  size_t size() const { return size_; }

 private:
  unsigned char *data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace xffl::comm

#endif
