#include "comm/wan/wan_communicator.h"

#include <new>

#include "comm/algorithms/collectives.h"

namespace xffl::comm::wan {

WanCommunicator::WanCommunicator(std::shared_ptr<WanHub> hub, const GroupSpec &group)
    : hub_(hub),
      links_(hub, group.members.to_vector(), group.my_index, GroupKey{group.tag, group.serial}, group.description) {}

template <typename Schedule>
void WanCommunicator::run(const char *operation, Schedule &&schedule) {
  if (failure_) throw *failure_;
  links_.begin(operation);
  try {
    schedule();
  } catch (const Error &error) {
    links_.close();
    failure_ = error;
    throw;
  } catch (const std::bad_alloc &) {
    links_.close();
    failure_ = Error(XFFL_ENOMEM, "rank " + std::to_string(hub_->settings().rank) + ": out of memory in wan " +
                                      operation);
    throw *failure_;
  } catch (const std::exception &error) {
    links_.close();
    failure_ = Error(XFFL_EINTERNAL, "rank " + std::to_string(hub_->settings().rank) + ": wan " + operation + ": " +
                                         error.what());
    throw *failure_;
  }
}

void WanCommunicator::allreduce(const void *send, void *recv, size_t count, xffl_dtype_t dtype, xffl_redop_t op,
                                void *) {
  run("allreduce", [&] { algorithms::allreduce(links_, send, recv, count, dtype, op, tuning_); });
}

void WanCommunicator::broadcast(void *buf, size_t count, xffl_dtype_t dtype, int root_index, void *) {
  run("broadcast", [&] { algorithms::broadcast(links_, buf, count, dtype, root_index, tuning_); });
}

void WanCommunicator::allgather(const void *send, void *recv, size_t send_count, xffl_dtype_t dtype, void *) {
  run("allgather", [&] { algorithms::allgather(links_, send, recv, send_count, dtype, tuning_); });
}

void WanCommunicator::reduce_scatter(const void *send, void *recv, size_t recv_count, xffl_dtype_t dtype,
                                     xffl_redop_t op, void *) {
  run("reduce_scatter", [&] { algorithms::reduce_scatter(links_, send, recv, recv_count, dtype, op, tuning_); });
}

void WanCommunicator::barrier() {
  run("barrier", [&] { algorithms::barrier(links_); });
}

}  // namespace xffl::comm::wan
