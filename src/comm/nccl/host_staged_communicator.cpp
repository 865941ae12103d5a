#include "comm/nccl/host_staged_communicator.h"

#include <algorithm>
#include <utility>

#include "comm/dtype.h"
#include "comm/nccl/nccl_types.h"
#include "common/error.h"

namespace xffl::comm::nccl {

HostStagedCommunicator::HostStagedCommunicator(std::shared_ptr<NcclContext> context, std::unique_ptr<Communicator> host,
                                               const GroupSpec &group, int instance)
    : context_(context), host_(std::move(host)), device_(context, nullptr, group.description, instance),
      description_(group.description), size_(group.members.size()), my_index_(group.my_index) {}

HostStagedCommunicator::~HostStagedCommunicator() {
  if (staging_) context_->api->host_free(staging_);
}

unsigned char *HostStagedCommunicator::staging(size_t bytes) {
  if (bytes <= staging_bytes_) return static_cast<unsigned char *>(staging_);
  NcclApi &api = *context_->api;
  if (staging_) api.host_free(staging_);
  staging_ = nullptr;
  staging_bytes_ = 0;
  void *made = nullptr;
  const int rc = api.host_alloc(&made, bytes);
  if (rc != kCudaSuccess)
    fail_cuda(api, rc, "rank " + std::to_string(context_->rank) + ": " + std::to_string(bytes) +
                           " bytes of pinned host memory to stage " + description_ + " (cudaMallocHost)");
  staging_ = made;
  staging_bytes_ = bytes;
  return static_cast<unsigned char *>(staging_);
}

void HostStagedCommunicator::stage_in(void *host, const void *device, size_t bytes, void *stream) {
  device_.copy(host, device, bytes, stream);
  device_.synchronize(stream);  // the host side reads it next
}

void HostStagedCommunicator::stage_out(void *device, const void *host, size_t bytes, void *stream) {
  device_.copy(device, host, bytes, stream);
  // Always waited for: the staging buffer is reused by the next call, on whatever stream that comes.
  device_.synchronize(stream);
}

void *HostStagedCommunicator::host_scratch(size_t bytes) {
  const DeviceScope scope(*context_->api, context_->device.get());
  return staging(bytes);
}

void HostStagedCommunicator::to_host(void *host, const void *device, size_t bytes, void *stream) {
  const DeviceScope scope(*context_->api, context_->device.get());
  stage_in(host, device, bytes, stream);
}

void HostStagedCommunicator::to_device(void *device, const void *host, size_t bytes, void *stream) {
  const DeviceScope scope(*context_->api, context_->device.get());
  stage_out(device, host, bytes, stream);
}

template <typename HostStep>
void HostStagedCommunicator::chunked(const void *in, void *out, size_t count, xffl_dtype_t dtype, void *stream,
                                     HostStep &&host_step) {
  const size_t element = dtype_size(dtype);
  const size_t chunk = std::max<size_t>(1, kStagingChunkBytes / element);
  unsigned char *host = staging(std::min(count, chunk) * element);
  for (size_t done = 0; done < count; done += chunk) {
    const size_t elements = std::min(chunk, count - done);
    const size_t offset = done * element;
    if (in) stage_in(host, static_cast<const unsigned char *>(in) + offset, elements * element, stream);
    host_step(host, elements);
    stage_out(static_cast<unsigned char *>(out) + offset, host, elements * element, stream);
  }
}

void HostStagedCommunicator::allreduce(const void *send, void *recv, size_t count, xffl_dtype_t dtype,
                                       xffl_redop_t op, void *stream) {
  const DeviceScope scope(*context_->api, context_->device.get());
  chunked(send, recv, count, dtype, stream,
          [&](void *host, size_t elements) { host_->allreduce(host, host, elements, dtype, op, nullptr); });
}

void HostStagedCommunicator::allreduce_scaled(void *buf, size_t count, xffl_dtype_t dtype, xffl_redop_t op,
                                              double premul, void *stream) {
  const DeviceScope scope(*context_->api, context_->device.get());
  chunked(buf, buf, count, dtype, stream, [&](void *host, size_t elements) {
    host_->allreduce_scaled(host, elements, dtype, op, premul, nullptr);
  });
}

void HostStagedCommunicator::broadcast(void *buf, size_t count, xffl_dtype_t dtype, int root_index, void *stream) {
  const DeviceScope scope(*context_->api, context_->device.get());
  const bool root = root_index == my_index_;
  chunked(root ? buf : nullptr, buf, count, dtype, stream, [&](void *host, size_t elements) {
    host_->broadcast(host, elements, dtype, root_index, nullptr);
  });
}

void HostStagedCommunicator::allgather(const void *send, void *recv, size_t send_count, xffl_dtype_t dtype,
                                       void *stream) {
  const DeviceScope scope(*context_->api, context_->device.get());
  const size_t bytes = send_count * dtype_size(dtype);
  unsigned char *host = staging(bytes * (static_cast<size_t>(size_) + 1));
  stage_in(host, send, bytes, stream);
  host_->allgather(host, host + bytes, send_count, dtype, nullptr);
  stage_out(recv, host + bytes, bytes * static_cast<size_t>(size_), stream);
}

void HostStagedCommunicator::reduce_scatter(const void *send, void *recv, size_t recv_count, xffl_dtype_t dtype,
                                            xffl_redop_t op, void *stream) {
  const DeviceScope scope(*context_->api, context_->device.get());
  const size_t bytes = recv_count * dtype_size(dtype);
  const size_t send_bytes = bytes * static_cast<size_t>(size_);
  unsigned char *host = staging(send_bytes + bytes);
  stage_in(host, send, send_bytes, stream);
  host_->reduce_scatter(host, host + send_bytes, recv_count, dtype, op, nullptr);
  stage_out(recv, host + send_bytes, bytes, stream);
}

void HostStagedCommunicator::barrier() { host_->barrier(); }

}  // namespace xffl::comm::nccl
