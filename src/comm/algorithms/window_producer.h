// The root's side of a broadcast whose buffer is written while it is sent (Communicator::
// broadcast_produced): the buffer is made final in consecutive windows, in order, each exactly once,
// as far as the schedule is about to send. Members other than the root hold one with an empty produce:
// every call then does nothing, and windows() still tells them how the root cuts the buffer.
#ifndef XFFL_SRC_COMM_ALGORITHMS_WINDOW_PRODUCER_H
#define XFFL_SRC_COMM_ALGORITHMS_WINDOW_PRODUCER_H

#include <cstddef>
#include <functional>

namespace xffl::comm::algorithms {

class WindowProducer {
 public:
  // produce(first, count) makes elements [first, first + count) final; `window` elements (> 0) each.
  WindowProducer(const std::function<void(size_t first, size_t count)> &produce, size_t count, size_t element,
                 size_t window)
      : produce_(produce), count_(count), element_(element), window_(window > 0 ? window : 1) {}

  // Makes bytes [0, end_bytes) final: produces every window not produced yet that holds one of them.
  void through(size_t end_bytes) {
    while (next_ < count_ && next_ * element_ < end_bytes) {
      const size_t n = count_ - next_ < window_ ? count_ - next_ : window_;
      if (produce_) produce_(next_, n);
      next_ += n;
    }
  }
  void all() { through(count_ * element_); }

  // The windows in bytes, the same on every member: windows() of window_bytes() each, the last shorter.
  size_t window_bytes() const { return window_ * element_; }
  size_t windows() const { return (count_ + window_ - 1) / window_; }

 private:
  const std::function<void(size_t, size_t)> &produce_;
  size_t count_;
  size_t element_;
  size_t window_;
  size_t next_ = 0;  // first element not produced yet
};

}  // namespace xffl::comm::algorithms

#endif
