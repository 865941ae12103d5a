#include "comm/ucx/process_memory.h"

#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace xffl::comm::ucx {

namespace {

// One process_vm_readv moves at most this much (the kernel's own cap is just under 2 GiB).
constexpr size_t kLargestRead = size_t{1} << 30;

// 0 when all bytes were read, else errno (EFAULT for a short read that made no progress).
int read_process(pid_t process, uint64_t from, void *to, size_t bytes) {
  auto *target = static_cast<unsigned char *>(to);
  while (bytes) {
    const size_t part = bytes < kLargestRead ? bytes : kLargestRead;
    iovec local{target, part};
    iovec remote{reinterpret_cast<void *>(static_cast<uintptr_t>(from)), part};
    const ssize_t got = process_vm_readv(process, &local, 1, &remote, 1, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (got == 0) return EFAULT;
    target += got;
    from += static_cast<uint64_t>(got);
    bytes -= static_cast<size_t>(got);
  }
  return 0;
}

}  // namespace

int64_t ProcessMemory::process_id() const { return static_cast<int64_t>(getpid()); }

void ProcessMemory::read(int peer, int64_t process, uint64_t from, void *to, size_t bytes, algorithms::Step step) {
  // Through the kernel even from a thread of this process (the tests' ranks): the members synchronise
  // through UCX, which ThreadSanitizer cannot see, so a memcpy here would be reported as a race with
  // the writer's last pass; the kernel's copy is not instrumented, as UCX's own copies are suppressed.
  if (!bytes) return;
  if (const int error = read_process(static_cast<pid_t>(process), from, to, bytes))
    transport_.memory_read_failed(peer, step, std::string("process_vm_readv of pid ") + std::to_string(process) +
                                                  ": " + std::strerror(error));
}

bool ProcessMemory::available() {
  static const bool works = [] {
    const unsigned char probe[16] = {1, 2, 3};
    unsigned char copy[sizeof probe] = {};
    return read_process(getpid(), static_cast<uint64_t>(reinterpret_cast<uintptr_t>(probe)), copy, sizeof copy) == 0 &&
           std::memcmp(probe, copy, sizeof probe) == 0;
  }();
  return works;
}

}  // namespace xffl::comm::ucx
