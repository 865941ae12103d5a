#include "comm/wan/wan_communicator.h"

#include <algorithm>
#include <new>

#include "comm/algorithm_choice.h"
#include "comm/algorithms/collectives.h"

namespace xffl::comm::wan {

namespace {

// Chunks kept in flight each way: the crossing's window (Tuning::crossing_window), or twice the link's
// bandwidth-delay product when XFFL_WAN_BDP says it is larger.
int window_for(size_t bdp_bytes, const algorithms::Tuning &tuning) {
  const size_t for_bdp = bdp_bytes / tuning.chunk_bytes * 2 + 2;  // about twice, rounded up, and no overflow
  const size_t least = static_cast<size_t>(std::max(1, tuning.crossing_window));
  return static_cast<int>(std::clamp<size_t>(for_bdp, std::min<size_t>(least, 4096), 4096));
}

}  // namespace

WanCommunicator::WanCommunicator(std::shared_ptr<WanHub> hub, const GroupSpec &group)
    : hub_(hub),
      members_(group.members.to_vector()),
      links_(hub, group.members.to_vector(), group.my_index, GroupKey{group.tag, group.serial}, group.description) {
  tuning_.window = window_for(hub->settings().bdp_bytes, tuning_);
  tuning_.halving_allreduce_bytes = 0;  // not measured over a WAN: the ring past recursive doubling, as before
}

template <typename Schedule>
void WanCommunicator::run(const char *operation, const CallSignature &arguments, Schedule &&schedule) {
  if (failure_) throw *failure_;
  links_.begin(operation, arguments);
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
  run("allreduce", CallSignature::of(CallKind::Allreduce, count, dtype, op),
      [&] { algorithms::allreduce(links_, send, recv, count, dtype, op, tuning_); });
}

void WanCommunicator::broadcast(void *buf, size_t count, xffl_dtype_t dtype, int root_index, void *) {
  run("broadcast", CallSignature::of(CallKind::Broadcast, count, dtype, -1, members_[static_cast<size_t>(root_index)]),
      [&] { algorithms::broadcast(links_, buf, count, dtype, root_index, tuning_); });
}

void WanCommunicator::allgather(const void *send, void *recv, size_t send_count, xffl_dtype_t dtype, void *) {
  run("allgather", CallSignature::of(CallKind::Allgather, send_count, dtype),
      [&] { algorithms::allgather(links_, send, recv, send_count, dtype, tuning_); });
}

void WanCommunicator::allgather_streamed(void *send, void *recv, size_t send_count, xffl_dtype_t dtype, size_t window,
                                         const Produce &produce, const Consume &consume, void *) {
  run("allgather", CallSignature::of(CallKind::Allgather, send_count, dtype), [&] {
    algorithms::streamed_allgather(links_, send, recv, send_count, dtype, window, produce, consume, tuning_);
  });
}

void WanCommunicator::reduce_scatter(const void *send, void *recv, size_t recv_count, xffl_dtype_t dtype,
                                     xffl_redop_t op, void *) {
  run("reduce_scatter", CallSignature::of(CallKind::ReduceScatter, recv_count, dtype, op),
      [&] { algorithms::reduce_scatter(links_, send, recv, recv_count, dtype, op, tuning_); });
}

void WanCommunicator::barrier() {
  run("barrier", CallSignature{}, [&] { algorithms::barrier(links_); });
}

}  // namespace xffl::comm::wan
