// A group's communicator on the cross-facility transport: the schedules of comm/algorithms (the same
// ring, recursive doubling, chain and dissemination as UCX, so results are bit-identical on every
// member) over the group's StripedLinks. After a failure the communicator is unusable: later calls
// throw the same error at once.
#ifndef XFFL_SRC_COMM_WAN_WAN_COMMUNICATOR_H
#define XFFL_SRC_COMM_WAN_WAN_COMMUNICATOR_H

#include <memory>
#include <optional>
#include <vector>

#include "comm/communicator.h"
#include "comm/wan/striped_links.h"
#include "common/error.h"

namespace xffl::comm::wan {

class WanCommunicator final : public Communicator {
 public:
  WanCommunicator(std::shared_ptr<WanHub> hub, const GroupSpec &group);

  void allreduce(const void *send, void *recv, size_t count, xffl_dtype_t dtype, xffl_redop_t op,
                 void *stream) override;
  void broadcast(void *buf, size_t count, xffl_dtype_t dtype, int root_index, void *stream) override;
  void allgather(const void *send, void *recv, size_t send_count, xffl_dtype_t dtype, void *stream) override;
  void reduce_scatter(const void *send, void *recv, size_t recv_count, xffl_dtype_t dtype, xffl_redop_t op,
                      void *stream) override;
  void barrier() override;
  // Each window is sent as soon as it is produced and consumed as soon as it has arrived (the ring's).
  void allgather_streamed(void *send, void *recv, size_t send_count, xffl_dtype_t dtype, size_t window,
                          const Produce &produce, const Consume &consume, void *stream) override;

  // The schedules' sizes: UCX's defaults, but for the window (below).
  const algorithms::Tuning &tuning() const { return tuning_; }

 private:
  // arguments: the call's, as every member must give them (call_arguments.h).
  template <typename Schedule>
  void run(const char *operation, const CallSignature &arguments, Schedule &&schedule);

  std::shared_ptr<WanHub> hub_;
  std::vector<int> members_;  // global ranks
  StripedLinks links_;
  // The defaults, as UCX's (the relay's receivers plan with the same chunks), but for the window:
  // Tuning::crossing_window, or twice XFFL_WAN_BDP in chunks when that is more.
  algorithms::Tuning tuning_;
  std::optional<Error> failure_;
};

}  // namespace xffl::comm::wan

#endif
