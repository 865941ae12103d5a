// PointToPoint over UCX tagged messages for one collective call on one group: maps member indices
// to endpoints, builds tags (tag.h), and waits with the call's deadline. Errors name this rank, the
// collective, the group, the peer awaited and the step; a timeout also names the members known to
// have failed, since the peer awaited may be a survivor that gave up because of them. While it
// waits on a peer of this host it looks whether that process still runs: a dead one fails the wait
// with XFFL_EPEER at once instead of at the timeout. A peer found failed is announced to the whole
// job (revocation.h), and every wait also ends with XFFL_EPEER naming the failed rank once such a
// notice has come from any member: a collective that waits on a survivor stuck elsewhere does not
// wait for the timeout. Destroying it with requests still outstanding
// cancels the receives and abandons the peers of unfinished sends (ucx_worker.h), so no buffer of
// the caller is touched after the collective has returned or thrown. Members that call with
// different arguments get XFFL_EINVAL naming both (call_check.h).
#ifndef XFFL_SRC_COMM_UCX_UCX_TRANSPORT_H
#define XFFL_SRC_COMM_UCX_UCX_TRANSPORT_H

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "comm/algorithms/point_to_point.h"
#include "comm/ucx/call_check.h"
#include "comm/ucx/ucx_worker.h"

namespace xffl::comm::ucx {

// The group as the transport sees it.
struct GroupView {
  std::vector<int> members;  // global ranks
  int my_index = 0;
  std::string description;
  uint64_t tag_bits = 0;     // tag.h group field
  // The federated average's relay comes as a plain broadcast (the sender all-reduces on a crossing
  // backend), not chunk by chunk in the ring's order.
  bool plain_relay = false;
  // The group crosses facilities (GroupSpec::crosses_facilities): its schedules keep
  // Tuning::crossing_window chunks in flight instead of Tuning::window.
  bool crosses_facilities = false;
};

// The call a transport serves, and the communicator's call before it (whose mismatch a member whose
// part completed early learns of at its next call).
struct CallContext {
  CallSignature signature;
  std::optional<CallSignature> previous;
};

class UcxTransport final : public algorithms::PointToPoint {
 public:
  // Throws XFFL_EINVAL when a notice says that the communicator's previous call did not match.
  UcxTransport(UcxWorker &worker, const GroupView &group, uint32_t sequence, const char *operation,
               const CallContext &call);
  ~UcxTransport() override;
  UcxTransport(const UcxTransport &) = delete;
  UcxTransport &operator=(const UcxTransport &) = delete;

  int size() const override { return static_cast<int>(group_.members.size()); }
  int index() const override { return group_.my_index; }
  algorithms::RequestId send(int peer, const void *data, size_t bytes, algorithms::Step step) override;
  algorithms::RequestId recv(int peer, void *data, size_t bytes, algorithms::Step step) override;
  void wait(algorithms::RequestId request) override;
  void wait_all() override;
  algorithms::ScratchStack *scratch_stack() override { return &worker_.pools().scratch; }
  // A direct read of a member's memory failed (process_memory.h): throws XFFL_EPEER naming the member,
  // the call and the step, as a failed wait on it does (its process has exited, or it gave up the
  // call and freed its buffers); a revocation, when there is one, names the real cause.
  void memory_read_failed(int peer, algorithms::Step step, const std::string &why);
  // The root's side of Communicator::abort_broadcast: tells every member of this call that it will
  // not send, and why (an aborted notice, call_check.h). Best effort, bounded; never throws.
  void abort_call(xffl_status_t status, const std::string &why) noexcept;

  // For waits outside UCX (the host segment, host_collectives.h), between their sleeps: throws as a
  // wait on `peer` would when the deadline has passed, the job is revoked, a mismatch notice of this
  // call came, or the peer's process is gone and arrived() (asked after seeing it gone: what it
  // published before it exited counts) is still false. Makes UCX progress once, so that notices arrive.
  void check_wait(int peer, algorithms::Step step, const std::function<bool()> &arrived);
  // A member called with other arguments (seen in the host segment): tells every member, as a
  // mismatch found in a message does, and throws XFFL_EINVAL naming both calls.
  void disagree_with(int peer, const CallSignature &theirs);
  // Runs `check` on this transport with the periodic checks of every wait (every 20 ms while waiting);
  // it may throw.
  void also_check(std::function<void(UcxTransport &)> check) { extra_check_ = std::move(check); }
  uint32_t sequence() const { return sequence_; }
  const char *operation() const { return operation_; }
  // When the call began (this transport was made): its deadline and the host segment's spinning
  // budget count from here.
  Clock::time_point started() const { return started_; }

 private:
  struct Request {
    void *handle = nullptr;  // UCX request while in flight
    int peer = 0;            // member index
    bool is_send = false;
    size_t bytes = 0;
    algorithms::Step step;
    void *staging = nullptr;  // a send's copy (send_staging.h), owned until UCX completes the send
  };
  template <typename Call>
  auto giving_up_on_error(Call &&call) -> decltype(call());
  algorithms::RequestId post_send(int peer, const void *data, size_t bytes, algorithms::Step step);
  algorithms::RequestId post_recv(int peer, void *data, size_t bytes, algorithms::Step step);
  void wait_for(algorithms::RequestId request);
  bool finished(Request &request);
  bool awaited_peer_exited(Request &request);
  void check_received(const Request &request, const ucp_tag_recv_info_t &info);
  // Mismatch handling (call_check.h). A member's message did not fit this call: tell every member,
  // wait briefly for the other arguments, throw XFFL_EINVAL.
  [[noreturn]] void mismatch_found(int culprit_index, const std::string &what);
  // Looks for notices and stray messages of this call (and notices of the previous one).
  void check_call();
  // Throws XFFL_EINVAL when a notice of this call is here (a failure may be its consequence).
  void mismatch_before_failure();
  // The same for a member this rank could not connect to: looks for notices until a bound.
  void mismatch_before_unreachable();
  void check_notices();
  // Takes the notices of this group; returns a member's arguments that differ from this call's, and
  // throws at once for a notice about the previous call.
  std::optional<Disagreement> take_notices();
  // Sends this call's notice to every member, once.
  void notify_members(int culprit, const CallSignature *theirs);
  void send_notices(uint32_t sequence, const CallSignature &mine, int culprit, const CallSignature *theirs);
  // Sends `notice` to every member but this one and those known failed, each bounded by kNoticeBound.
  void send_to_members(const MismatchNotice &notice, uint32_t sequence) noexcept;
  // A member's notice said it will not send in this call: its status and words, naming it.
  [[noreturn]] void aborted_by(const MismatchNotice &notice);
  [[noreturn]] void disagree(const Disagreement &other);
  [[noreturn]] void await_disagreement(const std::string &fallback);
  [[noreturn]] void timed_out(const Request &request);
  [[noreturn]] void peer_failed(const Request &request, const std::string &why);
  // Throws XFFL_EPEER naming the failed rank when the job is revoked (request: the one awaited, or
  // nullptr before any).
  void check_revocation(const Request *request);
  [[noreturn]] void revoked(const Request *request, const UcxWorker::Revocation &revocation);
  std::string other_failures(int excluded_rank);
  void ensure_peer_alive(const Request &request);
  std::string where(const Request &request) const;
  void abandon_outstanding(bool peers_alive);
  // Completes the oldest staged sends UCX has finished, so that their slots serve again.
  void reclaim_staged_sends();

  UcxWorker &worker_;
  const GroupView &group_;
  uint32_t sequence_;
  const char *operation_;
  int timeout_ms_;
  Clock::time_point started_;  // the clock read once for the call (a read costs tens of ns on a VM)
  Clock::time_point deadline_;
  Clock::time_point next_liveness_check_;
  std::vector<Request> requests_;
  size_t first_unfinished_ = 0;
  // Sends holding a slot, oldest first from first_staged_ (a vector: a deque allocates when made, and
  // a transport is made for every call).
  std::vector<algorithms::RequestId> staged_sends_;
  size_t first_staged_ = 0;
  CallContext call_;
  uint8_t signature_bits_;
  Clock::time_point next_call_check_;
  bool notice_sent_ = false;
  std::optional<MismatchNotice> uninformative_;  // a notice that did not name arguments other than ours
  std::function<void(UcxTransport &)> extra_check_;  // also_check
};

}  // namespace xffl::comm::ucx

#endif
