#include "comm/nccl/nccl_communicator.h"

#include <cstdint>
#include <cstring>
#include <utility>

#include "comm/dtype.h"
#include "comm/half.h"
#include "comm/nccl/nccl_types.h"
#include "common/error.h"

namespace xffl::comm::nccl {

namespace {

std::string counted(const char *what, size_t count, xffl_dtype_t dtype) {
  return std::string(what) + " of " + std::to_string(count) + " " + dtype_name(dtype);
}

// The PreMulSum scalar in the collective's own type, as NCCL reads it.
struct Scalar {
  unsigned char bytes[8] = {};
};

Scalar scalar_of(double value, xffl_dtype_t dtype) {
  Scalar scalar;
  switch (dtype) {
    case XFFL_F64: std::memcpy(scalar.bytes, &value, sizeof value); return scalar;
    case XFFL_F32: {
      const float narrow = static_cast<float>(value);
      std::memcpy(scalar.bytes, &narrow, sizeof narrow);
      return scalar;
    }
    case XFFL_F16:
    case XFFL_BF16: {
      const uint16_t half = dtype == XFFL_F16 ? f32_to_f16(static_cast<float>(value)) : f32_to_bf16(static_cast<float>(value));
      std::memcpy(scalar.bytes, &half, sizeof half);
      return scalar;
    }
    default: break;
  }
  fail(XFFL_EINVAL, "scaling by a factor needs a floating-point dtype, not ", dtype_name(dtype));
}

}  // namespace

NcclCommunicator::NcclCommunicator(std::shared_ptr<NcclContext> context, std::shared_ptr<NcclComm> comm,
                                   std::string description, int instance)
    : context_(std::move(context)), comm_(std::move(comm)), description_(std::move(description)), instance_(instance) {}

NcclCommunicator::~NcclCommunicator() {
  if (!scratch_) return;
  try {
    const DeviceScope scope(*context_->api, context_->device.get());  // freed on the device it came from
    context_->api->free_async(scratch_, scratch_stream_);
  } catch (...) {
    // a destructor reports nothing; the scratch word is lost at worst
  }
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

void NcclCommunicator::enqueue_copy(const void *send, void *recv, size_t bytes, Stream stream,
                                    const WaitSubject &what) {
  if (!bytes || send == recv) return;
  NcclApi &api = *context_->api;
  const int rc = api.copy_async(recv, send, bytes, stream);
  if (rc != kCudaSuccess) fail_cuda(api, rc, "rank " + std::to_string(context_->rank) + ": " + what.awaited + " in " +
                                                 what.group + " (cudaMemcpyAsync)");
}

void NcclCommunicator::copy_alone(const void *send, void *recv, size_t bytes, Stream stream, const WaitSubject &what) {
  enqueue_copy(send, recv, bytes, stream, what);
  if (!context_->stream_ordered) await_stream(*context_->api, nullptr, stream, what, context_->timeout_ms);
}

void NcclCommunicator::allreduce(const void *send, void *recv, size_t count, xffl_dtype_t dtype, xffl_redop_t op,
                                 void *stream) {
  const DeviceScope scope(*context_->api, context_->device.get());
  const Stream s = resolve(stream);
  const WaitSubject what = subject(counted("allreduce", count, dtype) + " (" + redop_name(op) + ")");
  if (!comm_) return copy_alone(send, recv, count * dtype_size(dtype), s, what);
  comm_->check_usable(what);
  const int rc = context_->api->all_reduce(send, recv, count, to_nccl_type(dtype), to_nccl_op(op), comm_->handle(), s);
  complete(rc, s, what, false);
}

void NcclCommunicator::allreduce_scaled(void *buf, size_t count, xffl_dtype_t dtype, xffl_redop_t op, double premul,
                                        void *stream) {
  const DeviceScope scope(*context_->api, context_->device.get());
  if (premul == 1.0) return allreduce(buf, buf, count, dtype, op, stream);
  if (op != XFFL_SUM && op != XFFL_AVG)
    fail(XFFL_EINVAL, "a scaled allreduce sums or averages, not ", redop_name(op));
  const int size = comm_ ? comm_->size() : 1;
  const Scalar scalar = scalar_of(op == XFFL_AVG ? premul / size : premul, dtype);
  const Stream s = resolve(stream);
  const WaitSubject what =
      subject(counted("allreduce", count, dtype) + " (" + redop_name(op) + ", own input times " + std::to_string(premul) + ")");
  if (!comm_)
    fail(XFFL_EUNSUPPORTED, "rank ", context_->rank, ": scaling device memory in ", description_,
         ", a group of one (no NCCL communicator to fuse the product into)");
  comm_->check_usable(what);
  NcclApi &api = *context_->api;
  int premul_sum = kNcclSum;
  const int made = api.red_op_create_pre_mul_sum(&premul_sum, scalar.bytes, to_nccl_type(dtype), comm_->handle());
  if (made == kNcclInProgress) await_ready(api, {comm_.get()}, what, context_->timeout_ms);
  if (made != kNcclSuccess && made != kNcclInProgress)
    fail_nccl(api, made, comm_->handle(), "rank " + std::to_string(context_->rank) + ": ncclRedOpCreatePreMulSum for " +
                                              what.awaited + " in " + what.group);
  int rc = api.all_reduce(buf, buf, count, to_nccl_type(dtype), premul_sum, comm_->handle(), s);
  // The operator may go once the call that uses it has returned; on a nonblocking communicator that
  // is when the enqueue is no longer in progress.
  if (rc == kNcclInProgress) {
    await_ready(api, {comm_.get()}, what, context_->timeout_ms);
    rc = kNcclSuccess;
  }
  api.red_op_destroy(premul_sum, comm_->handle());
  complete(rc, s, what, false);
}

void *NcclCommunicator::allocate(size_t bytes, void *stream) {
  const DeviceScope scope(*context_->api, context_->device.get());
  NcclApi &api = *context_->api;
  void *ptr = nullptr;
  const int rc = api.alloc_async(&ptr, bytes, resolve(stream));
  if (rc != kCudaSuccess)
    fail_cuda(api, rc, "rank " + std::to_string(context_->rank) + ": " + std::to_string(bytes) +
                           " bytes of device scratch for " + description_ + " (cudaMallocAsync)");
  return ptr;
}

void NcclCommunicator::release(void *ptr, void *stream) noexcept {
  if (!ptr) return;
  try {
    const DeviceScope scope(*context_->api, context_->device.get());
    context_->api->free_async(ptr, resolve(stream));
  } catch (...) {
    // resolve() cannot fail for a stream that allocate() resolved, nor the device's scope for the
    // device allocate() ran on; nothing to report from a release
  }
}

void NcclCommunicator::copy(void *dst, const void *src, size_t bytes, void *stream) {
  const DeviceScope scope(*context_->api, context_->device.get());
  enqueue_copy(src, dst, bytes, resolve(stream), subject("device copy of " + std::to_string(bytes) + " bytes"));
}

void NcclCommunicator::finish_copies(void *stream) {
  const DeviceScope scope(*context_->api, context_->device.get());
  if (!context_->stream_ordered) synchronize(stream);
}

void NcclCommunicator::synchronize(void *stream) {
  const DeviceScope scope(*context_->api, context_->device.get());
  await_stream(*context_->api, comm_.get(), resolve(stream), subject("the stream's work"), context_->timeout_ms);
}

void NcclCommunicator::broadcast(void *buf, size_t count, xffl_dtype_t dtype, int root_index, void *stream) {
  const DeviceScope scope(*context_->api, context_->device.get());
  const Stream s = resolve(stream);
  const WaitSubject what = subject(counted("broadcast", count, dtype) + " from member " + std::to_string(root_index));
  if (!comm_) return copy_alone(buf, buf, 0, s, what);
  comm_->check_usable(what);
  const int rc = context_->api->broadcast(buf, buf, count, to_nccl_type(dtype), root_index, comm_->handle(), s);
  complete(rc, s, what, false);
}

void NcclCommunicator::allgather(const void *send, void *recv, size_t send_count, xffl_dtype_t dtype, void *stream) {
  const DeviceScope scope(*context_->api, context_->device.get());
  const Stream s = resolve(stream);
  const WaitSubject what = subject(counted("allgather", send_count, dtype));
  if (!comm_) return copy_alone(send, recv, send_count * dtype_size(dtype), s, what);
  comm_->check_usable(what);
  const int rc = context_->api->all_gather(send, recv, send_count, to_nccl_type(dtype), comm_->handle(), s);
  complete(rc, s, what, false);
}

void NcclCommunicator::reduce_scatter(const void *send, void *recv, size_t recv_count, xffl_dtype_t dtype,
                                      xffl_redop_t op, void *stream) {
  const DeviceScope scope(*context_->api, context_->device.get());
  const Stream s = resolve(stream);
  const WaitSubject what = subject(counted("reduce_scatter", recv_count, dtype) + " (" + redop_name(op) + ")");
  if (!comm_) return copy_alone(send, recv, recv_count * dtype_size(dtype), s, what);
  comm_->check_usable(what);
  const int rc = context_->api->reduce_scatter(send, recv, recv_count, to_nccl_type(dtype), to_nccl_op(op),
                                               comm_->handle(), s);
  complete(rc, s, what, false);
}

void NcclCommunicator::barrier() {
  const DeviceScope scope(*context_->api, context_->device.get());
  if (!comm_) return;
  const WaitSubject what = subject("barrier (allreduce of 1 i32)");
  comm_->check_usable(what);
  NcclApi &api = *context_->api;
  const Stream s = resolve(nullptr);
  if (!scratch_) {
    // Stream-ordered, so that freeing it never synchronizes the device (cudaFree would, and block
    // forever behind a collective whose peer died).
    const int rc = api.alloc_async(&scratch_, sizeof(int), s);
    if (rc != kCudaSuccess) {
      scratch_ = nullptr;
      fail_cuda(api, rc, "rank " + std::to_string(context_->rank) + ": barrier scratch word of " + description_);
    }
    scratch_stream_ = s;
  }
  const int rc = api.all_reduce(scratch_, scratch_, 1, kNcclInt32, kNcclSum, comm_->handle(), s);
  complete(rc, s, what, true);
}

}  // namespace xffl::comm::nccl
