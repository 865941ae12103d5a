// A group whose members sit in different facilities, on a job whose buffers live on GPUs, when the
// cross-facility traffic goes over UCX (XFFL_OPT_CROSS_FACILITY_BACKEND): every collective copies the
// device buffer into pinned host memory on the stream, waits for it, runs the host communicator's
// collective (UCX, any network it reaches), and copies the result back on the stream. Allreduce and
// broadcast move in chunks of at most kStagingChunkBytes, so pinned memory stays bounded whatever the
// model size; allgather and reduce_scatter stage their whole buffers.
//
// Scratch memory and copies (federated averaging's buckets) are device memory, like the buffers.
// HostStaging (comm/communicator.h) lets host code stage the values itself: the WAN hop's compressed
// wire formats quantise on the host and talk over the host communicator.
#ifndef XFFL_SRC_COMM_NCCL_HOST_STAGED_COMMUNICATOR_H
#define XFFL_SRC_COMM_NCCL_HOST_STAGED_COMMUNICATOR_H

#include <memory>
#include <string>

#include "comm/communicator.h"
#include "comm/nccl/nccl_communicator.h"
#include "comm/nccl/nccl_context.h"

namespace xffl::comm::nccl {

constexpr size_t kStagingChunkBytes = size_t{256} << 20;

class HostStagedCommunicator final : public Communicator, public HostStaging {
 public:
  // host: the group's communicator on the host-memory backend; instance picks the pool's stream.
  HostStagedCommunicator(std::shared_ptr<NcclContext> context, std::unique_ptr<Communicator> host,
                         const GroupSpec &group, int instance);
  ~HostStagedCommunicator() override;

  void allreduce(const void *send, void *recv, size_t count, xffl_dtype_t dtype, xffl_redop_t op,
                 void *stream) override;
  void broadcast(void *buf, size_t count, xffl_dtype_t dtype, int root_index, void *stream) override;
  void allgather(const void *send, void *recv, size_t send_count, xffl_dtype_t dtype, void *stream) override;
  void reduce_scatter(const void *send, void *recv, size_t recv_count, xffl_dtype_t dtype, xffl_redop_t op,
                      void *stream) override;
  void barrier() override;
  // The weight is applied to the staged host copy, then the host communicator reduces.
  void allreduce_scaled(void *buf, size_t count, xffl_dtype_t dtype, xffl_redop_t op, double premul,
                        void *stream) override;

  void *allocate(size_t bytes, void *stream) override { return device_.allocate(bytes, stream); }
  void release(void *ptr, void *stream) noexcept override { device_.release(ptr, stream); }
  void copy(void *dst, const void *src, size_t bytes, void *stream) override { device_.copy(dst, src, bytes, stream); }
  void finish_copies(void *stream) override { device_.finish_copies(stream); }
  void synchronize(void *stream) override { device_.synchronize(stream); }

  HostStaging *host_staging() override { return this; }
  Communicator &host() override { return *host_; }
  // The pinned staging buffer the collectives use.
  void *host_scratch(size_t bytes) override;
  void to_host(void *host, const void *device, size_t bytes, void *stream) override;
  void to_device(void *device, const void *host, size_t bytes, void *stream) override;

 private:
  // Pinned host memory of at least `bytes`, grown when needed.
  unsigned char *staging(size_t bytes);
  // Runs `host_step(host, elements)` on each chunk of `in` staged into host memory, then copies the
  // chunk back to `out` (which may equal `in`).
  template <typename HostStep>
  void chunked(const void *in, void *out, size_t count, xffl_dtype_t dtype, void *stream, HostStep &&host_step);
  // to_host / to_device within a collective (the device already current).
  void stage_in(void *host, const void *device, size_t bytes, void *stream);
  void stage_out(void *device, const void *host, size_t bytes, void *stream);

  std::shared_ptr<NcclContext> context_;
  std::unique_ptr<Communicator> host_;
  NcclCommunicator device_;  // a group of one: device copies, scratch and the stream of this instance
  std::string description_;
  int size_;
  int my_index_;
  void *staging_ = nullptr;
  size_t staging_bytes_ = 0;
};

}  // namespace xffl::comm::nccl

#endif
