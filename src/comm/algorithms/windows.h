// The windows of a streamed collective: a buffer of `count` elements cut into consecutive windows of
// `window` elements (the last shorter), the same cut on every member, each visited once, in order.
//   WindowProducer, the sending side (Communicator::broadcast_produced's root, allgather_streamed's own
//     block): makes each window final as far as the schedule is about to send. Members other than the
//     root of a broadcast hold one with an empty produce: every call then does nothing, and windows()
//     still tells them how the root cuts the buffer.
//   WindowConsumer, the receiving side (allgather_streamed's gathered blocks): reads each window of
//     every block as soon as the schedule has it final.
#ifndef XFFL_SRC_COMM_ALGORITHMS_WINDOWS_H
#define XFFL_SRC_COMM_ALGORITHMS_WINDOWS_H

#include <cstddef>
#include <functional>

namespace xffl::comm::algorithms {

class Windows {
 public:
  // visit(first, count) for elements [first, first + count); an empty visit makes every call do nothing.
  Windows(const std::function<void(size_t first, size_t count)> &visit, size_t count, size_t element, size_t window)
      : visit_(visit), count_(count), element_(element), window_(window > 0 ? window : 1) {}

  // The windows in bytes, the same on every member: windows() of window_bytes() each, the last shorter.
  size_t window_bytes() const { return window_ * element_; }
  size_t windows() const { return (count_ + window_ - 1) / window_; }

 protected:
  // Visits, in order, each window not visited yet while ready(first, count) says so of it.
  template <typename Ready>
  void visit_while(Ready ready) {
    while (next_ < count_) {
      const size_t n = count_ - next_ < window_ ? count_ - next_ : window_;
      if (!ready(next_, n)) return;
      if (visit_) visit_(next_, n);
      next_ += n;
    }
  }
  size_t bytes() const { return count_ * element_; }
  size_t element() const { return element_; }

 private:
  const std::function<void(size_t, size_t)> &visit_;
  size_t count_;
  size_t element_;
  size_t window_;
  size_t next_ = 0;  // first element not visited yet
};

class WindowProducer : public Windows {
 public:
  // produce(first, count) makes elements [first, first + count) final.
  using Windows::Windows;
  // Makes bytes [0, end_bytes) final: produces every window not produced yet that holds one of them.
  void through(size_t end_bytes) {
    visit_while([&](size_t first, size_t) { return first * element() < end_bytes; });
  }
  void all() { through(bytes()); }
};

class WindowConsumer : public Windows {
 public:
  // consume(first, count) reads elements [first, first + count) of every block.
  using Windows::Windows;
  // Bytes [0, end_bytes) of every block are final: consumes every window not consumed yet that lies
  // wholly inside them.
  void through(size_t end_bytes) {
    visit_while([&](size_t first, size_t count) { return (first + count) * element() <= end_bytes; });
  }
  void all() { through(bytes()); }
};

}  // namespace xffl::comm::algorithms

#endif
