#include "comm/ucx/ucx_transport.h"

#include <sstream>

#include "comm/ucx/tag.h"
#include "common/error.h"

namespace xffl::comm::ucx {

UcxTransport::UcxTransport(UcxWorker &worker, const GroupView &group, uint32_t sequence, const char *operation)
    : worker_(worker), group_(group), sequence_(sequence), operation_(operation),
      timeout_ms_(worker.settings().timeout_ms),
      deadline_(Clock::now() + std::chrono::milliseconds(timeout_ms_)) {}

UcxTransport::~UcxTransport() { abandon_outstanding(); }

algorithms::RequestId UcxTransport::send(int peer, const void *data, size_t bytes, algorithms::Step step) {
  requests_.push_back(Request{nullptr, peer, true, bytes, step});
  Request &request = requests_.back();
  ensure_peer_alive(request);
  ucp_ep_h endpoint;
  try {
    endpoint = worker_.endpoint(group_.members[static_cast<size_t>(peer)], deadline_);
  } catch (const Error &error) {
    fail(error.status(), "rank ", worker_.rank(), ": ", operation_, " on ", group_.description, " could not reach rank ",
         group_.members[static_cast<size_t>(peer)], " (step ", step.index + 1, " of ", step.total, "): ", error.what());
  }
  ucp_request_param_t param{};
  const uint64_t tag = message_tag(group_.tag_bits, sequence_, group_.my_index, step.index);
  ucs_status_ptr_t handle = ucp_tag_send_nbx(endpoint, data, bytes, tag, &param);
  if (UCS_PTR_IS_ERR(handle)) peer_failed(request, ucs_status_string(UCS_PTR_STATUS(handle)));
  request.handle = handle;  // nullptr: completed at once
  return requests_.size() - 1;
}

algorithms::RequestId UcxTransport::recv(int peer, void *data, size_t bytes, algorithms::Step step) {
  requests_.push_back(Request{nullptr, peer, false, bytes, step});
  Request &request = requests_.back();
  // Always a request: UCX 1.13 leaves recv_info.tag_info->length at 0 when a receive completes
  // immediately, and the length check below needs the real one.
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FLAG_NO_IMM_CMPL;
  const uint64_t tag = message_tag(group_.tag_bits, sequence_, peer, step.index);
  ucs_status_ptr_t handle = ucp_tag_recv_nbx(worker_.handle(), data, bytes, tag, kExactTagMask, &param);
  if (UCS_PTR_IS_ERR(handle))
    fail(XFFL_EBACKEND, "rank ", worker_.rank(), ": UCX refused a receive in ", where(request), ": ",
         ucs_status_string(UCS_PTR_STATUS(handle)));
  request.handle = handle;
  return requests_.size() - 1;
}

bool UcxTransport::finished(Request &request) {
  if (!request.handle) return true;
  ucs_status_t status;
  ucp_tag_recv_info_t info{};
  if (request.is_send)
    status = ucp_request_check_status(request.handle);
  else
    status = ucp_tag_recv_request_test(request.handle, &info);
  if (status == UCS_INPROGRESS) return false;
  ucp_request_free(request.handle);
  request.handle = nullptr;
  if (status != UCS_OK) {
    const std::string *why = worker_.failure(group_.members[static_cast<size_t>(request.peer)]);
    if (why || status == UCS_ERR_CANCELED || status == UCS_ERR_CONNECTION_RESET || status == UCS_ERR_ENDPOINT_TIMEOUT ||
        status == UCS_ERR_UNREACHABLE)
      peer_failed(request, why ? *why : std::string("UCX reported ") + ucs_status_string(status));
    fail(XFFL_EBACKEND, "rank ", worker_.rank(), ": UCX failed a ", request.is_send ? "send" : "receive", " in ",
         where(request), ": ", ucs_status_string(status));
  }
  if (!request.is_send) check_received_length(request, info.length);
  return true;
}

void UcxTransport::check_received_length(const Request &request, size_t length) {
  if (length != request.bytes)
    fail(XFFL_EINTERNAL, "rank ", worker_.rank(), ": received ", length, " bytes instead of ", request.bytes, " in ",
         where(request), " (do all members call the same collective with the same count and dtype?)");
}

void UcxTransport::ensure_peer_alive(const Request &request) {
  if (const std::string *why = worker_.failure(group_.members[static_cast<size_t>(request.peer)]))
    peer_failed(request, *why);
}

void UcxTransport::wait(algorithms::RequestId id) {
  while (!finished(requests_[id])) {
    ensure_peer_alive(requests_[id]);
    if (Clock::now() >= deadline_) timed_out(requests_[id]);
    worker_.progress_or_sleep(deadline_);
  }
}

void UcxTransport::wait_all() {
  for (; first_unfinished_ < requests_.size(); ++first_unfinished_) wait(first_unfinished_);
}

std::string UcxTransport::where(const Request &request) const {
  std::ostringstream text;
  text << operation_ << " on " << group_.description << " (step " << request.step.index + 1 << " of "
       << request.step.total << ")";
  return text.str();
}

void UcxTransport::timed_out(const Request &request) {
  fail(XFFL_ETIMEOUT, "rank ", worker_.rank(), ": timed out after ", timeout_ms_, " ms in ", operation_, " on ",
       group_.description, " waiting for rank ", group_.members[static_cast<size_t>(request.peer)], " (step ",
       request.step.index + 1, " of ", request.step.total, ")");
}

void UcxTransport::peer_failed(const Request &request, const std::string &why) {
  fail(XFFL_EPEER, "rank ", worker_.rank(), ": rank ", group_.members[static_cast<size_t>(request.peer)], " failed (",
       why, ") in ", where(request));
}

// Receives are cancelled. A send cannot be recalled, so its peer's endpoint is force-closed: UCX
// then drops the send instead of reading the caller's buffer after we returned.
void UcxTransport::abandon_outstanding() {
  for (Request &request : requests_) {
    if (!request.handle) continue;
    if (ucp_request_check_status(request.handle) == UCS_INPROGRESS) {
      if (request.is_send) {
        worker_.abandon_peer(group_.members[static_cast<size_t>(request.peer)],
                             "abandoned after a failed " + std::string(operation_) + " on " + group_.description);
      } else {
        ucp_request_cancel(worker_.handle(), request.handle);
      }
    }
    ucp_request_free(request.handle);
    request.handle = nullptr;
  }
}

}  // namespace xffl::comm::ucx
