#include "output_relay.h"

#include <cstring>

#include "fd.h"

namespace xffl_run {

void OutputSink::write(const std::string& data) {
  if (broken_ || data.empty()) return;
  if (!write_all(fd_, data.data(), data.size())) broken_ = true;
}

OutputRelay::OutputRelay(int rank, bool tag, OutputSink& sink)
    : prefix_("[" + std::to_string(rank) + "] "), tag_(tag), sink_(sink) {}

void OutputRelay::feed(const char* data, std::size_t size) {
  if (!tag_) {
    sink_.write(std::string(data, size));
    return;
  }
  // Every complete line of this chunk goes out in one write: lines of other ranks can come before
  // or after it, never inside it.
  std::string out;
  const char* end = data + size;
  while (data < end) {
    const char* newline = static_cast<const char*>(std::memchr(data, '\n', static_cast<std::size_t>(end - data)));
    const char* stop = newline ? newline : end;
    std::size_t room = kMaxLine - partial_.size();
    std::size_t piece = static_cast<std::size_t>(stop - data);
    if (piece > room) {  // the line outgrew kMaxLine: emit a full piece and keep going
      out += prefix_;
      out += partial_;
      out.append(data, room);
      out += '\n';
      partial_.clear();
      data += room;
      continue;
    }
    partial_.append(data, piece);
    data = stop;
    if (newline) {
      out += prefix_;
      out += partial_;
      out += '\n';
      partial_.clear();
      ++data;
    }
  }
  sink_.write(out);
}

void OutputRelay::finish() {
  if (!tag_ || partial_.empty()) return;
  sink_.write(prefix_ + partial_ + "\n");
  partial_.clear();
}

}  // namespace xffl_run
