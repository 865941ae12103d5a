#include "comm/ucx/revocation.h"

#include <algorithm>
#include <cstring>

#include "comm/ucx/notice_receive.h"

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
  while (std::optional<RevokeNotice> notice =
             receive_notice<RevokeNotice>(worker, kRevokeTag, kRevokeTagMask, kReceiveBound)) {
    if (notice->magic != RevokeNotice::kMagic) continue;
    notice->why[sizeof notice->why - 1] = 0;
    return notice;
  }
  return std::nullopt;
}

}  // namespace xffl::comm::ucx
