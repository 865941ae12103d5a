// The receiving side of an allgather whose gathered blocks are read while they arrive
// (Communicator::allgather_streamed): every member's block is cut into the same consecutive windows,
// and consume(first, count) is called for each window, in order, exactly once, as soon as that window
// of every member's block is final in the output. The counterpart of window_producer.h.
#ifndef XFFL_SRC_COMM_ALGORITHMS_WINDOW_CONSUMER_H
#define XFFL_SRC_COMM_ALGORITHMS_WINDOW_CONSUMER_H

#include <cstddef>
#include <functional>

namespace xffl::comm::algorithms {

class WindowConsumer {
 public:
  // consume(first, count) reads elements [first, first + count) of every block; `window` elements (> 0)
  // each, the last window shorter. An empty consume makes every call do nothing.
  WindowConsumer(const std::function<void(size_t first, size_t count)> &consume, size_t count, size_t element,
                 size_t window)
      : consume_(consume), count_(count), element_(element), window_(window > 0 ? window : 1) {}

  // Bytes [0, end_bytes) of every block are final: consumes every window not consumed yet that lies
  // wholly inside them.
  void through(size_t end_bytes) {
    while (next_ < count_) {
      const size_t n = count_ - next_ < window_ ? count_ - next_ : window_;
      if ((next_ + n) * element_ > end_bytes) return;
      if (consume_) consume_(next_, n);
      next_ += n;
    }
  }
  void all() { through(count_ * element_); }

 private:
  const std::function<void(size_t, size_t)> &consume_;
  size_t count_;
  size_t element_;
  size_t window_;
  size_t next_ = 0;  // first element not consumed yet
};

}  // namespace xffl::comm::algorithms

#endif
