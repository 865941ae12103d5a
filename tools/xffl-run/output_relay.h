// Copies one rank's stdout or stderr to ours, a whole line at a time with a "[rank] " prefix.
#ifndef XFFL_RUN_OUTPUT_RELAY_H
#define XFFL_RUN_OUTPUT_RELAY_H

#include <cstddef>
#include <string>

namespace xffl_run {

// Our own stdout or stderr. Once a write fails (the reader went away) further output is dropped
// quietly: the ranks must still be supervised to the end.
class OutputSink {
 public:
  explicit OutputSink(int fd) : fd_(fd) {}
  void write(const std::string& data);

 private:
  int fd_;
  bool broken_ = false;
};

class OutputRelay {
 public:
  // A line longer than this is emitted in pieces of this size, each prefixed, so a rank writing
  // without newlines cannot make us hold unbounded memory.
  static constexpr std::size_t kMaxLine = 1 << 20;

  // tag == false passes bytes through as they arrive.
  OutputRelay(int rank, bool tag, OutputSink& sink);

  void feed(const char* data, std::size_t size);
  // End of stream: a last line without newline is emitted with one added.
  void finish();

 private:
  std::string prefix_;
  bool tag_;
  OutputSink& sink_;
  std::string partial_;  // bytes after the last newline seen
};

}  // namespace xffl_run

#endif
