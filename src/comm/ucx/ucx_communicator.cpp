#include "comm/ucx/ucx_communicator.h"

#include <new>

#include "comm/algorithms/collectives.h"

namespace xffl::comm::ucx {

UcxCommunicator::UcxCommunicator(std::shared_ptr<UcxWorker> worker, GroupView group)
    : worker_(std::move(worker)), group_(std::move(group)) {}

// The transport lives inside the try block: when a schedule throws, its destructor cancels what is
// still in flight before the error is recorded and passed on.
template <typename Schedule>
void UcxCommunicator::run(const char *operation, Schedule &&schedule) {
  if (failure_) throw *failure_;
  try {
    UcxTransport transport(*worker_, group_, sequence_++, operation);
    schedule(transport, worker_->settings().tuning);
    transport.wait_all();
  } catch (const Error &error) {
    failure_ = error;
    worker_->log(XFFL_LOG_ERROR, error.what());
    throw;
  } catch (const std::bad_alloc &) {
    failure_ = Error(XFFL_ENOMEM, "rank " + std::to_string(worker_->rank()) + ": out of memory in " + operation +
                                      " on " + group_.description);
    throw *failure_;
  } catch (const std::exception &error) {
    failure_ = Error(XFFL_EINTERNAL, "rank " + std::to_string(worker_->rank()) + ": " + operation + " on " +
                                         group_.description + ": " + error.what());
    throw *failure_;
  }
}

void UcxCommunicator::allreduce(const void *send, void *recv, size_t count, xffl_dtype_t dtype, xffl_redop_t op,
                                void *) {
  run("allreduce", [&](algorithms::PointToPoint &p2p, const algorithms::Tuning &tuning) {
    algorithms::allreduce(p2p, send, recv, count, dtype, op, tuning);
  });
}

void UcxCommunicator::broadcast(void *buf, size_t count, xffl_dtype_t dtype, int root_index, void *) {
  run("broadcast", [&](algorithms::PointToPoint &p2p, const algorithms::Tuning &tuning) {
    algorithms::broadcast(p2p, buf, count, dtype, root_index, tuning);
  });
}

void UcxCommunicator::allgather(const void *send, void *recv, size_t send_count, xffl_dtype_t dtype, void *) {
  run("allgather", [&](algorithms::PointToPoint &p2p, const algorithms::Tuning &tuning) {
    algorithms::allgather(p2p, send, recv, send_count, dtype, tuning);
  });
}

void UcxCommunicator::reduce_scatter(const void *send, void *recv, size_t recv_count, xffl_dtype_t dtype,
                                     xffl_redop_t op, void *) {
  run("reduce_scatter", [&](algorithms::PointToPoint &p2p, const algorithms::Tuning &tuning) {
    algorithms::reduce_scatter(p2p, send, recv, recv_count, dtype, op, tuning);
  });
}

void UcxCommunicator::barrier() {
  run("barrier", [&](algorithms::PointToPoint &p2p, const algorithms::Tuning &) { algorithms::barrier(p2p); });
}

}  // namespace xffl::comm::ucx
