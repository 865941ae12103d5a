// File descriptors with an owner, and the few raw operations the launcher repeats.
#ifndef XFFL_RUN_FD_H
#define XFFL_RUN_FD_H

#include <cstddef>

namespace xffl_run {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) reset(other.release());
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void reset(int fd = -1);

 private:
  int fd_ = -1;
};

struct Pipe {
  UniqueFd read_end;
  UniqueFd write_end;
};

// Both ends close-on-exec, so no child inherits a pipe it was not given explicitly.
Pipe make_pipe();

void set_nonblocking(int fd);

// Writes everything, riding out EINTR, short writes and a non-blocking fd that is momentarily full.
// Returns false when the fd is unusable (EPIPE, EBADF, ...).
bool write_all(int fd, const char* data, std::size_t size);

}  // namespace xffl_run

#endif
