// Reading another member's buffer directly, for members on one host: one copy from its memory into
// ours, with no message and no copy through a shared segment. The UCX backend implements it with
// process_vm_readv (ucx/process_memory.h), also between threads of one process (the tests' ranks).
// Which process to read comes in the schedule's own messages (single_copy.h): each member sends
// process_id() with the addresses of its buffers.
#ifndef XFFL_SRC_COMM_ALGORITHMS_PEER_MEMORY_H
#define XFFL_SRC_COMM_ALGORITHMS_PEER_MEMORY_H

#include <cstddef>
#include <cstdint>

#include "comm/algorithms/point_to_point.h"

namespace xffl::comm::algorithms {

class PeerMemory {
 public:
  virtual ~PeerMemory() = default;
  // How a peer names this member's process in read().
  virtual int64_t process_id() const = 0;
  // Copies `bytes` from address `from` of member `peer` (whose process_id() is `process`) to `to`.
  // Throws xffl::Error as a wait does (XFFL_EPEER naming the peer and the step when its process is
  // gone or its memory cannot be read).
  virtual void read(int peer, int64_t process, uint64_t from, void *to, size_t bytes, Step step) = 0;
};

}  // namespace xffl::comm::algorithms

#endif
