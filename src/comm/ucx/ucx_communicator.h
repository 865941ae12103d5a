// A group's communicator on the UCX backend: the member list plus its own tag space, nothing
// negotiated with the members (creating one costs no message). Each collective runs a schedule of
// comm/algorithms over a fresh UcxTransport; its sequence number keeps successive collectives apart.
// After a failure the communicator is unusable: later calls throw the same error at once.
#ifndef XFFL_SRC_COMM_UCX_UCX_COMMUNICATOR_H
#define XFFL_SRC_COMM_UCX_UCX_COMMUNICATOR_H

#include <memory>
#include <optional>

#include "comm/communicator.h"
#include "comm/ucx/host_collectives.h"
#include "comm/ucx/ucx_transport.h"
#include "common/error.h"

namespace xffl::comm::ucx {

class UcxCommunicator final : public Communicator {
 public:
  UcxCommunicator(std::shared_ptr<UcxWorker> worker, GroupView group);

  void allreduce(const void *send, void *recv, size_t count, xffl_dtype_t dtype, xffl_redop_t op,
                 void *stream) override;
  void broadcast(void *buf, size_t count, xffl_dtype_t dtype, int root_index, void *stream) override;
  void allgather(const void *send, void *recv, size_t send_count, xffl_dtype_t dtype, void *stream) override;
  void reduce_scatter(const void *send, void *recv, size_t recv_count, xffl_dtype_t dtype, xffl_redop_t op,
                      void *stream) override;
  void barrier() override;
  // Whether every member published this host, this pid namespace (so that each can read the others'
  // memory) and this network namespace (another one stands for another machine: process_identity.h),
  // and this process may read others' memory; decided once, from the address table's bytes, the same
  // on every member (a lookup of what is not there yet may throw as PeerAddresses::look_up does).
  bool members_share_host();
  // An aborted notice to every member of the broadcast's call (call_check.h).
  void abort_broadcast(int root_index, size_t count, xffl_dtype_t dtype, const Error &why) noexcept override;
  // The root sends (or, on one host, exposes) each window as soon as it is produced.
  void broadcast_produced(void *buf, size_t count, xffl_dtype_t dtype, int root_index, size_t window,
                          const Produce &produce, void *stream) override;
  // Across hosts each window leaves as soon as it is produced and is consumed as soon as it has
  // arrived (the ring's); on one host every window is produced first and consumed last.
  void allgather_streamed(void *send, void *recv, size_t send_count, xffl_dtype_t dtype, size_t window,
                          const Produce &produce, const Consume &consume, void *stream) override;
  // Whether the group's shared segment for the small collectives is set up (host_collectives.h).
  bool has_host_segment() const { return host_ && host_->set_up(); }
  // How many allreduces took the segment's pipelined path (host_collectives.h).
  uint64_t host_pipelined_calls() const { return host_ ? host_->pipelined_calls() : 0; }
  uint64_t host_continued_calls() const { return host_ ? host_->continued_calls() : 0; }
  uint64_t host_streamed_bytes() const { return host_ ? host_->streamed_bytes() : 0; }
  uint64_t host_reduced_in_output_bytes() const { return host_ ? host_->reduced_in_output_bytes() : 0; }
  uint64_t host_done_flags_read() const { return host_ ? host_->done_flags_read() : 0; }
  // The scratch its worker keeps between calls (algorithms/scratch.h: the ring's staging, one slot per
  // chunk in flight), in bytes.
  size_t scratch_retained() const { return worker_->pools().scratch.retained(); }
  // Overlapped when `relay` is a UCX communicator of the same worker (algorithms/relay.h).
  void allreduce_and_relay(void *buf, size_t count, xffl_dtype_t dtype, xffl_redop_t op, double premul,
                           Communicator &relay, int relay_root, void *stream) override;
  void relay_receive(void *buf, size_t count, xffl_dtype_t dtype, xffl_redop_t op, int relay_root,
                     int federated_size, int sender_index, void *stream) override;

 private:
  // The sizes its schedules run with: the backend's, with Tuning::crossing_window for the window of a
  // group that crosses facilities.
  algorithms::Tuning tuning() const;
  // signature: the call's arguments as every member must give them (call_check.h).
  template <typename Schedule>
  void run(const char *operation, const CallSignature &signature, Schedule &&schedule);
  // One schedule over two groups at once (this one and partner's, whose call is partner_signature),
  // on the same worker; a failure makes both communicators unusable.
  template <typename Schedule>
  void run_paired(const char *operation, const CallSignature &signature, UcxCommunicator *partner,
                  const CallSignature &partner_signature, Schedule &&schedule);
  // The call this communicator runs next, and the one before (CallContext), advancing the record.
  CallContext next_call(const CallSignature &signature);
  // Whether this call takes the single-copy schedules (algorithms/single_copy.h): a buffer of `bytes`
  // (the same on every member) of at least `from` bytes (algorithm_choice.h), and every member on
  // this host. The same answer on every member.
  bool single_copy(const algorithms::Tuning &tuning, size_t bytes, size_t from);
  // Whether this call takes the group's shared segment (host_collectives.h): a buffer of `bytes`
  // below `below` (algorithm_choice.h; bytes 0 only for a barrier), the sizes chosen by size, and
  // every member on this host; sets the segment up on the first such call. The same answer on every
  // member.
  bool host_segment(UcxTransport &p2p, const algorithms::Tuning &tuning, size_t bytes, size_t below,
                    bool barrier = false);
  // members_share_host, with a failed address lookup reported as a failure of `operation` naming the
  // member (the caller's words).
  bool members_share_host_for(const char *operation);
  // Whether this allreduce of `bytes` takes the segment's pipelined allreduce (from `from`, by_size
  // tuning, every member on this host, the segment set up or set up now). The same on every member.
  bool host_pipeline(UcxTransport &p2p, const algorithms::Tuning &tuning, size_t bytes, size_t from);
  // Runs the allgather on this host (pipelined rounds, single copy or the segment, by size) when every
  // member is on it, calling `before` (when set) first; false, having done nothing, when the call
  // takes UCX messages. The same answer on every member.
  bool allgather_on_host(UcxTransport &p2p, const algorithms::Tuning &tuning, const CallSignature &signature,
                         const void *send, void *recv, size_t send_count, xffl_dtype_t dtype,
                         const std::function<void()> &before);
  // Sets the segment up when this is the group's first call that may take it (host_collectives.h).
  bool host_ready(UcxTransport &p2p);

  int global_root(int root_index) const { return group_.members[static_cast<size_t>(root_index)]; }

  std::shared_ptr<UcxWorker> worker_;
  GroupView group_;
  uint32_t sequence_ = 0;
  std::optional<CallSignature> last_call_;
  std::optional<bool> members_share_host_;
  std::unique_ptr<HostCollectives> host_;  // made on the first call that may take the segment
  std::optional<Error> failure_;
};

}  // namespace xffl::comm::ucx

#endif
