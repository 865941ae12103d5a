#include "comm/nccl/nccl_communicator.h"

#include <utility>

#include "comm/dtype.h"
#include "comm/nccl/nccl_types.h"
#include "common/error.h"

namespace xffl::comm::nccl {

namespace {

std::string counted(const char *what, size_t count, xffl_dtype_t dtype) {
  return std::string(what) + " of " + std::to_string(count) + " " + dtype_name(dtype);
}

}  // namespace

NcclCommunicator::NcclCommunicator(std::shared_ptr<NcclContext> context, std::shared_ptr<NcclComm> comm,
                                   std::string description, int instance)
    : context_(std::move(context)), comm_(std::move(comm)), description_(std::move(description)), instance_(instance) {}

NcclCommunicator::~NcclCommunicator() {
  if (scratch_) context_->api->device_free(scratch_);
}

Stream NcclCommunicator::resolve(void *stream) const {
  if (stream) return stream;
  if (!context_->device) fail(XFFL_EINTERNAL, "NCCL backend: no device chosen before a collective on ", description_);
  return context_->device->at(instance_);
}

WaitSubject NcclCommunicator::subject(std::string awaited) const {
  return WaitSubject{context_->rank, description_, std::move(awaited)};
}

void NcclCommunicator::complete(int rc, Stream stream, const WaitSubject &what, bool always_wait) {
  NcclApi &api = *context_->api;
  if (rc == kNcclInProgress) {
    await_ready(api, {comm_.get()}, what, context_->timeout_ms);
  } else if (rc != kNcclSuccess) {
    // A call refused at once may still be a peer's failure seen by the communicator.
    await_ready(api, {comm_.get()}, what, context_->timeout_ms);
    fail_nccl(api, rc, comm_->handle(), "rank " + std::to_string(context_->rank) + ": " + what.awaited + " in " +
                                            what.group);
  }
  if (always_wait || !context_->stream_ordered) await_stream(api, comm_.get(), stream, what, context_->timeout_ms);
}

void NcclCommunicator::copy_alone(const void *send, void *recv, size_t bytes, Stream stream, const WaitSubject &what) {
  NcclApi &api = *context_->api;
  if (bytes && send != recv) {
    const int rc = api.copy_async(recv, send, bytes, stream);
    if (rc != kCudaSuccess) fail_cuda(api, rc, "rank " + std::to_string(context_->rank) + ": " + what.awaited + " in " +
                                                   what.group + " (cudaMemcpyAsync)");
  }
  if (!context_->stream_ordered) await_stream(api, nullptr, stream, what, context_->timeout_ms);
}

void NcclCommunicator::allreduce(const void *send, void *recv, size_t count, xffl_dtype_t dtype, xffl_redop_t op,
                                 void *stream) {
  const Stream s = resolve(stream);
  const WaitSubject what = subject(counted("allreduce", count, dtype) + " (" + redop_name(op) + ")");
  if (!comm_) return copy_alone(send, recv, count * dtype_size(dtype), s, what);
  comm_->check_usable(what);
  const int rc = context_->api->all_reduce(send, recv, count, to_nccl_type(dtype), to_nccl_op(op), comm_->handle(), s);
  complete(rc, s, what, false);
}

void NcclCommunicator::broadcast(void *buf, size_t count, xffl_dtype_t dtype, int root_index, void *stream) {
  const Stream s = resolve(stream);
  const WaitSubject what = subject(counted("broadcast", count, dtype) + " from member " + std::to_string(root_index));
  if (!comm_) return copy_alone(buf, buf, 0, s, what);
  comm_->check_usable(what);
  const int rc = context_->api->broadcast(buf, buf, count, to_nccl_type(dtype), root_index, comm_->handle(), s);
  complete(rc, s, what, false);
}

void NcclCommunicator::allgather(const void *send, void *recv, size_t send_count, xffl_dtype_t dtype, void *stream) {
  const Stream s = resolve(stream);
  const WaitSubject what = subject(counted("allgather", send_count, dtype));
  if (!comm_) return copy_alone(send, recv, send_count * dtype_size(dtype), s, what);
  comm_->check_usable(what);
  const int rc = context_->api->all_gather(send, recv, send_count, to_nccl_type(dtype), comm_->handle(), s);
  complete(rc, s, what, false);
}

void NcclCommunicator::reduce_scatter(const void *send, void *recv, size_t recv_count, xffl_dtype_t dtype,
                                      xffl_redop_t op, void *stream) {
  const Stream s = resolve(stream);
  const WaitSubject what = subject(counted("reduce_scatter", recv_count, dtype) + " (" + redop_name(op) + ")");
  if (!comm_) return copy_alone(send, recv, recv_count * dtype_size(dtype), s, what);
  comm_->check_usable(what);
  const int rc = context_->api->reduce_scatter(send, recv, recv_count, to_nccl_type(dtype), to_nccl_op(op),
                                               comm_->handle(), s);
  complete(rc, s, what, false);
}

void NcclCommunicator::barrier() {
  if (!comm_) return;
  const WaitSubject what = subject("barrier (allreduce of 1 i32)");
  comm_->check_usable(what);
  NcclApi &api = *context_->api;
  if (!scratch_) {
    const int rc = api.device_alloc(&scratch_, sizeof(int));
    if (rc != kCudaSuccess) {
      scratch_ = nullptr;
      fail_cuda(api, rc, "rank " + std::to_string(context_->rank) + ": barrier scratch word of " + description_);
    }
  }
  const Stream s = resolve(nullptr);
  const int rc = api.all_reduce(scratch_, scratch_, 1, kNcclInt32, kNcclSum, comm_->handle(), s);
  complete(rc, s, what, true);
}

}  // namespace xffl::comm::nccl
