#include "comm/ucx/ucx_transport.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <sstream>
#include <utility>

#include "comm/ucx/tag.h"
#include "comm/ucx/ucx_log_filter.h"
#include "common/error.h"

namespace xffl::comm::ucx {

namespace {

// How often a wait looks in /proc whether the peer it waits on still runs (a few microseconds each).
constexpr auto kLivenessCheckInterval = std::chrono::milliseconds(100);
// A peer only received from has no address looked up yet; the wait looks it up once, this long at most.
constexpr int kLivenessLookupBoundMs = 100;
// Progress calls that deliver what a peer sent before it exited, before its death counts.
constexpr int kDrainRounds = 1000;
// After a timeout, looking up the addresses of members never contacted (to see whether their
// processes on this host still run) takes at most this long.
constexpr int kDiagnosisBoundMs = 1000;
// Cancelled receives and sends to force-closed endpoints normally complete at the next progress.
constexpr int kAbandonBoundMs = 500;
// How often a wait looks for mismatch notices and stray messages of its call (call_check.h).
constexpr auto kCallCheckInterval = std::chrono::milliseconds(20);
// A member that found a mismatch waits this long for a notice naming the other arguments (members
// still in the call answer within kCallCheckInterval), and sending the notices takes at most this.
constexpr auto kNoticeBound = std::chrono::milliseconds(1000);

}  // namespace

UcxTransport::UcxTransport(UcxWorker &worker, const GroupView &group, uint32_t sequence, const char *operation,
                           const CallContext &call)
    : worker_(worker), group_(group), sequence_(sequence), operation_(operation),
      timeout_ms_(worker.settings().timeout_ms), started_(Clock::now()),
      deadline_(started_ + std::chrono::milliseconds(timeout_ms_)),
      next_liveness_check_(started_ + kLivenessCheckInterval), call_(call),
      signature_bits_(signature_bits(call.signature)), next_call_check_(started_ + kCallCheckInterval) {
  // One probe of an (almost always empty) unexpected queue: a member whose part of the previous call
  // completed before a mismatch was found learns of it here.
  // A notice of this very call may be here already, when a member found the mismatch first.
  if (group_.members.size() > 1) {
    if (auto other = take_notices()) disagree(*other);
    check_revocation(nullptr);  // a collective started after a revocation ends at once
  }
}

UcxTransport::~UcxTransport() { abandon_outstanding(false); }

// The algorithm's own buffers (its Scratch) are freed while the exception unwinds, before this
// transport's destructor: what is in flight must be given up before anything leaves these calls.
template <typename Call>
auto UcxTransport::giving_up_on_error(Call &&call) -> decltype(call()) {
  try {
    return call();
  } catch (const Error &error) {
    // Members that disagreed (XFFL_EINVAL) are alive: their endpoints stay open (a force-closed
    // endpoint that a healthy peer still sends to trips an assertion in UCX 1.13's rendezvous).
    abandon_outstanding(error.status() == XFFL_EINVAL);
    throw;
  } catch (...) {
    abandon_outstanding(false);
    throw;
  }
}

algorithms::RequestId UcxTransport::send(int peer, const void *data, size_t bytes, algorithms::Step step) {
  return giving_up_on_error([&] { return post_send(peer, data, bytes, step); });
}

algorithms::RequestId UcxTransport::recv(int peer, void *data, size_t bytes, algorithms::Step step) {
  return giving_up_on_error([&] { return post_recv(peer, data, bytes, step); });
}

void UcxTransport::wait(algorithms::RequestId id) {
  giving_up_on_error([&] { wait_for(id); });
}

void UcxTransport::wait_all() {
  giving_up_on_error([&] {
    for (; first_unfinished_ < requests_.size(); ++first_unfinished_) wait_for(first_unfinished_);
  });
}

algorithms::RequestId UcxTransport::post_send(int peer, const void *data, size_t bytes, algorithms::Step step) {
  requests_.push_back(Request{nullptr, peer, true, bytes, step});
  Request &request = requests_.back();
  ensure_peer_alive(request);
  ucp_ep_h endpoint;
  try {
    endpoint = worker_.endpoints().endpoint(group_.members[static_cast<size_t>(peer)], deadline_);
  } catch (const Error &error) {
    if (error.status() == XFFL_EPEER) mismatch_before_unreachable();
    fail(error.status(), "rank ", worker_.rank(), ": ", operation_, " on ", group_.description, " could not reach rank ",
         group_.members[static_cast<size_t>(peer)], " (step ", step.index + 1, " of ", step.total, "): ", error.what());
  }
  ucp_request_param_t param{};
  const uint64_t tag =
      message_tag(group_.tag_bits, sequence_, static_cast<uint64_t>(group_.my_index), signature_bits_, step.index);
  if (worker_.endpoints().shares_memory_with(group_.members[static_cast<size_t>(peer)])) {
    if (!worker_.pools().send_staging.has_free_slot()) reclaim_staged_sends();
    request.staging = worker_.pools().send_staging.stage(data, bytes);
    if (request.staging) data = request.staging;
  }
  ucs_status_ptr_t handle = ucx().ucp_tag_send_nbx(endpoint, data, bytes, tag, &param);
  if (UCS_PTR_IS_ERR(handle)) {
    worker_.pools().send_staging.release(std::exchange(request.staging, nullptr));
    peer_failed(request, ucx().ucs_status_string(UCS_PTR_STATUS(handle)));
  }
  request.handle = handle;  // nullptr: completed at once
  if (!handle) worker_.pools().send_staging.release(std::exchange(request.staging, nullptr));
  if (request.staging) staged_sends_.push_back(requests_.size() - 1);
  return requests_.size() - 1;
}

void UcxTransport::reclaim_staged_sends() {
  while (first_staged_ < staged_sends_.size()) {
    Request &oldest = requests_[staged_sends_[first_staged_]];
    if (oldest.handle && ucx().ucp_request_check_status(oldest.handle) == UCS_INPROGRESS) {
      if (ucx().ucp_worker_progress(worker_.handle()) == 0) return;  // nothing moved: send from the caller's buffer
      continue;
    }
    finished(oldest);  // releases the slot; throws as a wait would if the send failed
    ++first_staged_;
  }
}

algorithms::RequestId UcxTransport::post_recv(int peer, void *data, size_t bytes, algorithms::Step step) {
  requests_.push_back(Request{nullptr, peer, false, bytes, step});
  Request &request = requests_.back();
  // Always a request: UCX 1.13 leaves recv_info.tag_info->length at 0 when a receive completes
  // immediately, and the length check below needs the real one.
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FLAG_NO_IMM_CMPL;
  const uint64_t tag = message_tag(group_.tag_bits, sequence_, static_cast<uint64_t>(peer), signature_bits_, step.index);
  ucs_status_ptr_t handle = ucx().ucp_tag_recv_nbx(worker_.handle(), data, bytes, tag, kReceiveMask, &param);
  if (UCS_PTR_IS_ERR(handle))
    fail(XFFL_EBACKEND, "rank ", worker_.rank(), ": UCX refused a receive in ", where(request), ": ",
         ucx().ucs_status_string(UCS_PTR_STATUS(handle)));
  request.handle = handle;
  return requests_.size() - 1;
}

bool UcxTransport::finished(Request &request) {
  if (!request.handle) return true;
  ucs_status_t status;
  ucp_tag_recv_info_t info{};
  if (request.is_send)
    status = ucx().ucp_request_check_status(request.handle);
  else
    status = ucx().ucp_tag_recv_request_test(request.handle, &info);
  if (status == UCS_INPROGRESS) return false;
  ucx().ucp_request_free(request.handle);
  request.handle = nullptr;
  worker_.pools().send_staging.release(std::exchange(request.staging, nullptr));
  if (status == UCS_ERR_MESSAGE_TRUNCATED && !request.is_send)
    mismatch_found(request.peer, "sent more than the " + std::to_string(request.bytes) + " bytes this call expects in " +
                                     where(request));
  if (status != UCS_OK) {
    const int peer_rank = group_.members[static_cast<size_t>(request.peer)];
    const std::string transport_words = take_transport_failure();  // CMA's report, see ucx_log_filter.h
    if (worker_.failures().failure(peer_rank) || is_peer_side_failure(status)) {
      worker_.failures().mark_failed(peer_rank, std::string("UCX reported ") + ucx().ucs_status_string(status) +
                                         (transport_words.empty() ? "" : ": " + transport_words));
      peer_failed(request, *worker_.failures().failure(peer_rank));
    }
    mismatch_before_failure();
    fail(XFFL_EBACKEND, "rank ", worker_.rank(), ": UCX failed a ", request.is_send ? "send" : "receive", " in ",
         where(request), ": ", ucx().ucs_status_string(status));
  }
  if (!request.is_send) check_received(request, info);
  return true;
}

void UcxTransport::check_received(const Request &request, const ucp_tag_recv_info_t &info) {
  if (signature_of(info.sender_tag) != signature_bits_)
    mismatch_found(request.peer, "sent a message of a call with other arguments in " + where(request));
  if (info.length != request.bytes)
    mismatch_found(request.peer, "sent " + std::to_string(info.length) + " bytes where this call expects " +
                                     std::to_string(request.bytes) + " in " + where(request));
}

void UcxTransport::check_call() {
  check_notices();
  if (extra_check_) extra_check_(*this);
  // A member that took another root (or another collective) may send where nobody receives.
  ucp_tag_recv_info_t info{};
  if (ucx().ucp_tag_probe_nb(worker_.handle(), message_tag(group_.tag_bits, sequence_, 0, 0, 0), kCallMask, 0, &info)) {
    const uint64_t sender = sender_of(info.sender_tag);
    if (sender < group_.members.size() && signature_of(info.sender_tag) != signature_bits_)
      mismatch_found(static_cast<int>(sender), "sent this rank a message of a call with other arguments in " +
                                                   std::string(operation_) + " on " + group_.description);
  }
}

// A member that found a mismatch sends its notices, then gives up its sends, which may fail our
// receives from it: the notice, sent first, is the real cause.
void UcxTransport::mismatch_before_failure() {
  for (int round = 0; round < kDrainRounds && ucx().ucp_worker_progress(worker_.handle()) != 0; ++round) {
  }
  check_notices();
}

// A member that found a mismatch sends its notices, returns XFFL_EINVAL and may destroy its state
// before this rank first connects to it: UCX then cannot attach its shared memory any more, and its
// notice, sent before, is the real cause. It may not have been taken in yet: UCX polls a transport
// with no endpoint of this worker only after its async thread saw the transport's event (measured:
// the rounds of mismatch_before_failure found nothing in 1 of about 100 four-rank runs under load),
// so this looks for a bounded time. A peer that really failed costs that bound once.
void UcxTransport::mismatch_before_unreachable() {
  const auto bound = std::min(Clock::now() + kNoticeBound, std::max(deadline_, Clock::now()));
  while (true) {
    mismatch_before_failure();
    if (Clock::now() >= bound) return;
    worker_.progress_or_sleep(bound);
  }
}

void UcxTransport::check_notices() {
  if (auto other = take_notices()) disagree(*other);
  if (uninformative_)
    await_disagreement("rank " + std::to_string(uninformative_->notifier) + " found that rank " +
                       std::to_string(uninformative_->culprit) + " called " + operation_ + " on " +
                       group_.description + " with other arguments");
}

std::optional<Disagreement> UcxTransport::take_notices() {
  const uint32_t current = sequence_ & 0xffu, previous = (sequence_ - 1) & 0xffu;
  while (auto notice = take_notice(worker_.handle(), notice_tag(group_.tag_bits, 0), kGroupNoticeMask)) {
    if (notice->sequence == current) {
      if (notice->aborted) aborted_by(*notice);
      if (auto other = disagreement(*notice, call_.signature)) return other;
      uninformative_ = *notice;
    } else if (notice->sequence == previous && call_.previous && !notice->aborted) {
      if (auto other = disagreement(*notice, *call_.previous)) {
        // Members that found the mismatch may still wait for this rank's arguments.
        send_notices(previous, *call_.previous, other->rank, &other->signature);
        fail(XFFL_EINVAL, describe_difference(other->rank, other->signature, worker_.rank(), *call_.previous),
             " in the previous collective on ", group_.description, " (rank ", worker_.rank(),
             "'s part of it had completed); every member must call a collective with the same count, dtype, op "
             "and root");
      }
    }  // else a notice of a call long gone: dropped
  }
  return std::nullopt;
}

void UcxTransport::notify_members(int culprit, const CallSignature *theirs) {
  if (std::exchange(notice_sent_, true)) return;
  send_notices(sequence_, call_.signature, culprit, theirs);
}

void UcxTransport::send_notices(uint32_t sequence, const CallSignature &mine, int culprit, const CallSignature *theirs) {
  MismatchNotice notice;
  notice.notifier = worker_.rank();
  notice.culprit = culprit;
  notice.culprit_known = theirs != nullptr;
  notice.sequence = sequence & 0xffu;
  notice.mine = mine;
  if (theirs) notice.theirs = *theirs;
  send_to_members(notice, sequence);
}

void UcxTransport::send_to_members(const MismatchNotice &notice, uint32_t sequence) noexcept {
  // A copy on the heap: with its words a notice is too large for UCX's immediate sends, and one still
  // in flight at the bound is kept (leaked), since UCX may read it later.
  auto *copy = new (std::nothrow) MismatchNotice(notice);
  if (!copy) return;
  bool in_flight = false;
  const auto bound = Clock::now() + kNoticeBound;
  const uint64_t tag = notice_tag(group_.tag_bits, sequence);
  for (size_t i = 0; i < group_.members.size(); ++i) {
    const int member = group_.members[i];
    if (static_cast<int>(i) == group_.my_index || worker_.failures().failure(member)) continue;
    try {
      const NoticeSend sent =
          send_notice_waiting(worker_.handle(), worker_.endpoints().endpoint(member, bound), *copy, tag, bound);
      in_flight = in_flight || sent == NoticeSend::in_flight;
    } catch (...) {  // a member we cannot reach learns of it by its own timeout
    }
  }
  if (!in_flight) delete copy;
}

void UcxTransport::abort_call(xffl_status_t status, const std::string &why) noexcept {
  MismatchNotice notice;
  notice.notifier = worker_.rank();
  notice.sequence = sequence_ & 0xffu;
  notice.mine = call_.signature;
  notice.aborted = 1;
  notice.status = status;
  why.copy(notice.why, sizeof notice.why - 1);
  send_to_members(notice, sequence_);
}

void UcxTransport::aborted_by(const MismatchNotice &notice) {
  const std::string why(notice.why, strnlen(notice.why, sizeof notice.why));
  const xffl_status_t status = notice.status != XFFL_OK ? static_cast<xffl_status_t>(notice.status) : XFFL_EPEER;
  fail(status, "rank ", worker_.rank(), ": ", operation_, " on ", group_.description, ": rank ", notice.notifier,
       ", its root, failed before sending: ", why);
}

void UcxTransport::disagree(const Disagreement &other) {
  notify_members(other.rank, &other.signature);
  fail(XFFL_EINVAL, describe_difference(other.rank, other.signature, worker_.rank(), call_.signature), " (", operation_,
       " on ", group_.description, "); every member must call a collective with the same count, dtype, op and root");
}

void UcxTransport::mismatch_found(int culprit_index, const std::string &what) {
  const int culprit = group_.members[static_cast<size_t>(culprit_index)];
  notify_members(culprit, nullptr);
  await_disagreement("rank " + std::to_string(culprit) + " " + what);
}

void UcxTransport::await_disagreement(const std::string &fallback) {
  const auto bound = std::min(Clock::now() + kNoticeBound, std::max(deadline_, Clock::now()));
  while (true) {
    if (auto other = take_notices()) disagree(*other);
    if (Clock::now() >= bound) break;
    worker_.progress_or_sleep(bound);
  }
  fail(XFFL_EINVAL, "rank ", worker_.rank(), ": ", fallback, ": this rank called ", describe_call(call_.signature),
       ", which differs from that rank's call (its arguments did not arrive within ",
       std::chrono::duration_cast<std::chrono::milliseconds>(kNoticeBound).count(),
       " ms); every member must call a collective with the same count, dtype, op and root");
}

void UcxTransport::ensure_peer_alive(const Request &request) {
  check_revocation(&request);
  if (const std::string *why = worker_.failures().failure(group_.members[static_cast<size_t>(request.peer)]))
    peer_failed(request, *why);
}

void UcxTransport::wait_for(algorithms::RequestId id) {
  while (!finished(requests_[id])) {
    ensure_peer_alive(requests_[id]);
    const auto now = Clock::now();
    if (now >= next_call_check_) {
      next_call_check_ = now + kCallCheckInterval;
      check_call();
    }
    if (now >= deadline_) timed_out(requests_[id]);
    if (now >= next_liveness_check_) {
      next_liveness_check_ = now + kLivenessCheckInterval;
      if (awaited_peer_exited(requests_[id]))
        peer_failed(requests_[id], *worker_.failures().failure(group_.members[static_cast<size_t>(requests_[id].peer)]));
    }
    worker_.progress_or_sleep(deadline_);
  }
}

// A peer that sent its last messages and then exited is not a failure: what it sent is already in
// shared memory (or our socket), so progress delivers it first, and only a request still open after
// that counts. Large messages cannot be in that state: their sender waits for our acknowledgement.
bool UcxTransport::awaited_peer_exited(Request &request) {
  const int peer_rank = group_.members[static_cast<size_t>(request.peer)];
  if (worker_.failures().failure(peer_rank) ||
      !worker_.failures().check_peer_process(peer_rank, Clock::now() + std::chrono::milliseconds(kLivenessLookupBoundMs)))
    return false;
  for (int round = 0; round < kDrainRounds && ucx().ucp_worker_progress(worker_.handle()) != 0; ++round) {
  }
  return !finished(request);
}


std::string UcxTransport::where(const Request &request) const {
  std::ostringstream text;
  text << operation_ << " on " << group_.description << " (step " << request.step.index + 1 << " of "
       << request.step.total << ")";
  return text.str();
}

// The peer awaited may be a survivor that stopped because another member died: name those too.
void UcxTransport::timed_out(const Request &request) {
  worker_.failures().mark_unresponsive(group_.members[static_cast<size_t>(request.peer)]);
  const std::string known = other_failures(-1);
  fail(XFFL_ETIMEOUT, "rank ", worker_.rank(), ": timed out after ", timeout_ms_, " ms in ", operation_, " on ",
       group_.description, " waiting for rank ", group_.members[static_cast<size_t>(request.peer)], " (step ",
       request.step.index + 1, " of ", request.step.total, ")", known);
}

// A failed peer may itself be a survivor that gave up because of something else (another member,
// the store): what else is known follows.
void UcxTransport::peer_failed(const Request &request, const std::string &why) {
  mismatch_before_failure();
  const int peer_rank = group_.members[static_cast<size_t>(request.peer)];
  // A revoke notice sent before its sender gave up on us (and closed its endpoint, which may fail
  // our wait on it) names the real cause: the sender is alive and must not be announced.
  if (const UcxWorker::Revocation *revocation = worker_.poll_revocation())
    if (revocation->failed_rank != peer_rank) revoked(&request, *revocation);
  if (worker_.failures().confirmed(peer_rank)) worker_.announce_failure(peer_rank, why, worker_.rank());
  const std::string known = other_failures(peer_rank);
  fail(XFFL_EPEER, "rank ", worker_.rank(), ": rank ", peer_rank, " failed (", why, ") in ", where(request), known);
}

void UcxTransport::memory_read_failed(int peer, algorithms::Step step, const std::string &why) {
  giving_up_on_error([&] {
    requests_.push_back(Request{nullptr, peer, false, 0, step});
    const Request request = requests_.back();
    check_revocation(&request);
    const int peer_rank = group_.members[static_cast<size_t>(peer)];
    if (worker_.failures().check_peer_process(peer_rank, Clock::now() + std::chrono::milliseconds(kLivenessLookupBoundMs)))
      peer_failed(request, *worker_.failures().failure(peer_rank));
    fail(XFFL_EPEER, "rank ", worker_.rank(), ": could not read the buffer of rank ", peer_rank, " (", why,
         "; it gave up the call) in ", where(request), other_failures(peer_rank));
  });
}

void UcxTransport::check_wait(int peer, algorithms::Step step, const std::function<bool()> &arrived) {
  giving_up_on_error([&] {
    const Request request{nullptr, peer, false, 0, step};
    ucx().ucp_worker_progress(worker_.handle());
    ensure_peer_alive(request);
    const auto now = Clock::now();
    if (now >= next_call_check_) {
      next_call_check_ = now + kCallCheckInterval;
      check_call();
    }
    if (now >= deadline_) timed_out(request);
    if (now >= next_liveness_check_) {
      next_liveness_check_ = now + kLivenessCheckInterval;
      const int peer_rank = group_.members[static_cast<size_t>(peer)];
      if (!worker_.failures().failure(peer_rank) &&
          worker_.failures().check_peer_process(peer_rank, now + std::chrono::milliseconds(kLivenessLookupBoundMs)) &&
          !arrived())
        peer_failed(request, *worker_.failures().failure(peer_rank));
    }
  });
}

void UcxTransport::disagree_with(int peer, const CallSignature &theirs) {
  giving_up_on_error([&] { disagree(Disagreement{group_.members[static_cast<size_t>(peer)], theirs}); });
}

void UcxTransport::check_revocation(const Request *request) {
  if (const UcxWorker::Revocation *revocation = worker_.poll_revocation()) revoked(request, *revocation);
}

// No store request here (other_failures): the store's host may be the rank that failed.
void UcxTransport::revoked(const Request *request, const UcxWorker::Revocation &revocation) {
  std::string awaited;
  if (request)
    awaited = " waiting for rank " + std::to_string(group_.members[static_cast<size_t>(request->peer)]) + " in " +
              where(*request);
  else
    awaited = " at the start of " + std::string(operation_) + " on " + group_.description;
  fail(XFFL_EPEER, "rank ", worker_.rank(), ": rank ", revocation.failed_rank, " failed (", revocation.why,
       "; seen by rank ", revocation.detector, ", which revoked the job)", awaited);
}

// "; rank 3 is known to have failed (...)" for every such member but excluded_rank, or "".
std::string UcxTransport::other_failures(int excluded_rank) {
  std::string known;
  const auto bound = std::chrono::milliseconds(std::min(timeout_ms_, kDiagnosisBoundMs));
  for (const std::string &phrase : worker_.failures().known_failures(group_.members, excluded_rank, Clock::now() + bound))
    known += "; " + phrase;
  return known;
}

// Receives are cancelled. A send cannot be recalled, so its peer's endpoint is force-closed: UCX
// then drops the send instead of reading the caller's buffer after we returned. The worker then
// progresses until UCX has completed them (bounded) and releases them. Sends UCX will never
// complete (to a dead peer on this host, see abandon_peer) are released at once: UCX frees them
// with the worker. peers_alive (the call ended in a mismatch: every member is healthy and has given
// up the call): endpoints stay open and unfinished sends are only left to the worker; their receiver
// cancelled its receives and the group takes no further call, so nothing will match them and UCX
// never reads their buffers.
void UcxTransport::abandon_outstanding(bool peers_alive) {
  std::vector<void *> handles;
  for (Request &request : requests_) {
    if (!request.handle) continue;
    bool completes = true;
    if (ucx().ucp_request_check_status(request.handle) == UCS_INPROGRESS) {
      if (!request.is_send) {
        ucx().ucp_request_cancel(worker_.handle(), request.handle);
      } else if (!peers_alive) {
        completes = worker_.abandon_peer(group_.members[static_cast<size_t>(request.peer)],
                                         "abandoned after a failed " + std::string(operation_) + " on " +
                                             group_.description);
      }
    }
    if (completes)
      handles.push_back(request.handle);
    else
      ucx().ucp_request_free(request.handle);
    request.handle = nullptr;
    request.staging = nullptr;  // UCX may still read it: never released (send_staging.h)
  }
  if (!handles.empty())
    worker_.release_abandoned(std::move(handles), Clock::now() + std::chrono::milliseconds(kAbandonBoundMs));
  (void)take_transport_failure();  // a CMA failure met while draining belongs to no later call
}

}  // namespace xffl::comm::ucx
