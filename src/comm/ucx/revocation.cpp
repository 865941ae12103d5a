#include "comm/ucx/revocation.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace xffl::comm::ucx {

namespace {

// A notice is a few hundred bytes (eager): receiving it completes at the next progress.
constexpr auto kReceiveBound = std::chrono::milliseconds(100);

}  // namespace

void RevokeNotice::set_why(const std::string &text) {
  const size_t length = std::min(text.size(), sizeof why - 1);
  std::memcpy(why, text.data(), length);
  why[length] = 0;
}

std::string RevokeNotice::why_text() const { return std::string(why, strnlen(why, sizeof why)); }

ucs_status_ptr_t send_revoke_notice(ucp_ep_h endpoint, const RevokeNotice &notice) {
  ucp_request_param_t param{};
  return ucx().ucp_tag_send_nbx(endpoint, &notice, sizeof notice, kRevokeTag, &param);
}

std::optional<RevokeNotice> take_revoke_notice(ucp_worker_h worker) {
  while (true) {
    ucp_tag_recv_info_t info{};
    ucp_tag_message_h message = ucx().ucp_tag_probe_nb(worker, kRevokeTag, kRevokeTagMask, 1, &info);
    if (!message) return std::nullopt;
    RevokeNotice notice;
    std::vector<unsigned char> other;  // a message of another size: received and dropped
    const bool fits = info.length == sizeof notice;
    if (!fits) other.resize(info.length);
    ucp_request_param_t param{};
    param.op_attr_mask = UCP_OP_ATTR_FLAG_NO_IMM_CMPL;
    ucs_status_ptr_t request = ucx().ucp_tag_msg_recv_nbx(worker, fits ? static_cast<void *>(&notice) : other.data(),
                                                          info.length, message, &param);
    if (UCS_PTR_IS_ERR(request)) continue;
    const auto deadline = std::chrono::steady_clock::now() + kReceiveBound;
    ucs_status_t status = UCS_OK;
    if (request) {
      while ((status = ucx().ucp_request_check_status(request)) == UCS_INPROGRESS &&
             std::chrono::steady_clock::now() < deadline)
        ucx().ucp_worker_progress(worker);
      if (status == UCS_INPROGRESS) ucx().ucp_request_cancel(worker, request);
      while (ucx().ucp_request_check_status(request) == UCS_INPROGRESS) ucx().ucp_worker_progress(worker);
      ucx().ucp_request_free(request);
    }
    if (fits && status == UCS_OK && notice.magic == RevokeNotice::kMagic) {
      notice.why[sizeof notice.why - 1] = 0;
      return notice;
    }
  }
}

}  // namespace xffl::comm::ucx
