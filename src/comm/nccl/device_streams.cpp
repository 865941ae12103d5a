#include "comm/nccl/device_streams.h"

#include <string>

#include "comm/nccl/nccl_types.h"
#include "common/error.h"

namespace xffl::comm::nccl {

int cuda_device_count(NcclApi &api) {
  int count = 0;
  const int rc = api.device_count(&count);
  if (rc != kCudaSuccess) fail_cuda(api, rc, "CUDA device count (cudaGetDeviceCount)");
  if (count < 1) fail(XFFL_EUNSUPPORTED, "CUDA sees no device on this machine");
  return count;
}

int choose_device(int requested, int node_local_rank, int count) {
  if (count < 1) fail(XFFL_EUNSUPPORTED, "CUDA sees no device on this machine");
  if (requested == -1) {
    if (node_local_rank < 0) fail(XFFL_EINVAL, "node local rank ", node_local_rank, " is negative");
    return node_local_rank % count;
  }
  if (requested < 0 || requested >= count)
    fail(XFFL_EINVAL, "device index ", requested, " outside [0, ", count, ") CUDA devices (or -1 to choose)");
  return requested;
}

DeviceStreams::DeviceStreams(std::shared_ptr<NcclApi> api, int device, int streams)
    : api_(std::move(api)), device_(device) {
  if (streams < 1) fail(XFFL_EINVAL, "streams ", streams, " must be at least 1");
  make_current();
  grow(streams);
}

DeviceStreams::~DeviceStreams() {
  for (Stream stream : streams_) api_->stream_destroy(stream);  // errors cannot be reported here
}

Stream DeviceStreams::at(int index) const {
  if (streams_.empty() || index < 0) fail(XFFL_EINVAL, "stream index ", index, " outside [0, ", streams_.size(), ")");
  return streams_[static_cast<size_t>(index) % streams_.size()];
}

void DeviceStreams::grow(int streams) {
  make_current();
  while (static_cast<int>(streams_.size()) < streams) {
    Stream stream = nullptr;
    const int rc = api_->stream_create(&stream);
    if (rc != kCudaSuccess)
      fail_cuda(*api_, rc, "creating stream " + std::to_string(streams_.size()) + " on CUDA device " +
                               std::to_string(device_));
    streams_.push_back(stream);
  }
}

void DeviceStreams::make_current() const {
  const int rc = api_->set_device(device_);
  if (rc != kCudaSuccess) fail_cuda(*api_, rc, "selecting CUDA device " + std::to_string(device_));
}

DeviceScope::DeviceScope(NcclApi &api, const DeviceStreams *streams) : api_(api) {
  if (!streams) return;
  int current = -1;
  const int rc = api_.get_device(&current);
  if (rc != kCudaSuccess) fail_cuda(api_, rc, "reading the calling thread's CUDA device (cudaGetDevice)");
  if (current == streams->device()) return;
  streams->make_current();
  saved_ = current;
}

DeviceScope::~DeviceScope() {
  if (saved_ >= 0) api_.set_device(saved_);  // it was current a moment ago: nothing to report
}

}  // namespace xffl::comm::nccl
