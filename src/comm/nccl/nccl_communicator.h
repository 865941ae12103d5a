// One group instance on the NCCL backend: collectives on device buffers, enqueued on the caller's
// stream (or the pool's stream of the group's instance when the caller passes NULL), then watched
// to completion by the watchdog. A group of one has no NCCL communicator: its collectives are device
// copies on the stream.
#ifndef XFFL_SRC_COMM_NCCL_NCCL_COMMUNICATOR_H
#define XFFL_SRC_COMM_NCCL_NCCL_COMMUNICATOR_H

#include <memory>
#include <string>

#include "comm/communicator.h"
#include "comm/nccl/nccl_context.h"
#include "comm/nccl/watchdog.h"

namespace xffl::comm::nccl {

class NcclCommunicator final : public Communicator {
 public:
  // comm null: a group of one.
  NcclCommunicator(std::shared_ptr<NcclContext> context, std::shared_ptr<NcclComm> comm, std::string description,
                   int instance);
  ~NcclCommunicator() override;

  void allreduce(const void *send, void *recv, size_t count, xffl_dtype_t dtype, xffl_redop_t op,
                 void *stream) override;
  void broadcast(void *buf, size_t count, xffl_dtype_t dtype, int root_index, void *stream) override;
  void allgather(const void *send, void *recv, size_t send_count, xffl_dtype_t dtype, void *stream) override;
  void reduce_scatter(const void *send, void *recv, size_t recv_count, xffl_dtype_t dtype, xffl_redop_t op,
                      void *stream) override;
  // An allreduce of one int on a scratch device word, always waited for.
  void barrier() override;
  // premul != 1: one ncclRedOpCreatePreMulSum per call (scalar premul, or premul / size for AVG), so
  // the weighting costs no pass over device memory.
  void allreduce_scaled(void *buf, size_t count, xffl_dtype_t dtype, xffl_redop_t op, double premul,
                        void *stream) override;
  // Device memory from the stream-ordered allocator; copies with cudaMemcpyAsync on the stream.
  void *allocate(size_t bytes, void *stream) override;
  void release(void *ptr, void *stream) noexcept override;
  void copy(void *dst, const void *src, size_t bytes, void *stream) override;  // enqueued only
  void finish_copies(void *stream) override;
  // Returns once the work enqueued on the stream (NULL: this instance's pool stream) is done (bounded).
  void synchronize(void *stream) override;

  const std::shared_ptr<NcclComm> &comm() const { return comm_; }

 private:
  Stream resolve(void *stream) const;
  WaitSubject subject(std::string awaited) const;
  // Handles NCCL's answer to an enqueue, then waits for the stream unless stream-ordered.
  void complete(int rc, Stream stream, const WaitSubject &what, bool always_wait);
  void enqueue_copy(const void *send, void *recv, size_t bytes, Stream stream, const WaitSubject &what);
  // A group of one's collective: the copy, then the wait a collective owes unless stream-ordered.
  void copy_alone(const void *send, void *recv, size_t bytes, Stream stream, const WaitSubject &what);

  std::shared_ptr<NcclContext> context_;
  std::shared_ptr<NcclComm> comm_;
  std::string description_;
  int instance_;
  void *scratch_ = nullptr;  // device word of the barrier, stream-ordered on scratch_stream_
  Stream scratch_stream_ = nullptr;
};

}  // namespace xffl::comm::nccl

#endif
