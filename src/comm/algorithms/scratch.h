// Uninitialised temporary memory for staging and widened copies (zeroing it would cost a pass over
// memory for nothing: every byte is written before it is read).
#ifndef XFFL_SRC_COMM_ALGORITHMS_SCRATCH_H
#define XFFL_SRC_COMM_ALGORITHMS_SCRATCH_H

#include <cstddef>
#include <memory>

namespace xffl::comm::algorithms {

class Scratch {
 public:
  explicit Scratch(size_t bytes) : bytes_(new unsigned char[bytes ? bytes : 1]) {}
  unsigned char *data() { return bytes_.get(); }

 private:
  std::unique_ptr<unsigned char[]> bytes_;
};

}  // namespace xffl::comm::algorithms

#endif
