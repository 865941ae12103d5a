// PeerMemory (algorithms/peer_memory.h) for the members of a UCX group on one host: process_vm_readv
// (cross-memory attach, one copy by the kernel from the peer's pages into ours), also when the peer is
// a thread of this process (the tests' ranks). A read that fails means the peer is gone or
// has given up the call (its buffers freed): the transport names it (XFFL_EPEER) as a failed wait would.
//
// The kernel allows the read between processes of one user that ptrace could attach to (no
// Yama ptrace_scope above 0, no seccomp filter forbidding the call); available() probes the call once
// per process and the communicator keeps the UCX messages where it is refused.
#ifndef XFFL_SRC_COMM_UCX_PROCESS_MEMORY_H
#define XFFL_SRC_COMM_UCX_PROCESS_MEMORY_H

#include "comm/algorithms/peer_memory.h"
#include "comm/ucx/ucx_transport.h"

namespace xffl::comm::ucx {

class ProcessMemory final : public algorithms::PeerMemory {
 public:
  explicit ProcessMemory(UcxTransport &transport) : transport_(transport) {}
  int64_t process_id() const override;
  void read(int peer, int64_t process, uint64_t from, void *to, size_t bytes, algorithms::Step step) override;
  // Whether process_vm_readv works in this process (checked once, on its own memory).
  static bool available();

 private:
  UcxTransport &transport_;
};

}  // namespace xffl::comm::ucx

#endif
