#include "comm/ucx/call_check.h"

#include "comm/ucx/notice_receive.h"
#include "comm/ucx/ucx_api.h"

namespace xffl::comm::ucx {

namespace {

// Receiving a notice already in this process's queue: normally done at the first progress.
constexpr auto kReceiveBound = std::chrono::milliseconds(1000);

}  // namespace

std::optional<Disagreement> disagreement(const MismatchNotice &notice, const CallSignature &mine) {
  if (notice.mine != mine) return Disagreement{notice.notifier, notice.mine};
  if (notice.culprit_known && notice.theirs != mine) return Disagreement{notice.culprit, notice.theirs};
  return std::nullopt;
}

std::optional<MismatchNotice> take_notice(ucp_worker_h worker, uint64_t tag, uint64_t mask) {
  while (std::optional<MismatchNotice> notice = receive_notice<MismatchNotice>(worker, tag, mask, kReceiveBound))
    if (notice->magic == MismatchNotice::kMagic) return notice;
  return std::nullopt;
}

NoticeSend send_notice_waiting(ucp_worker_h worker, ucp_ep_h endpoint, const MismatchNotice &notice, uint64_t tag,
                               std::chrono::steady_clock::time_point deadline) {
  ucp_request_param_t param{};
  ucs_status_ptr_t request = ucx().ucp_tag_send_nbx(endpoint, &notice, sizeof notice, tag, &param);
  if (!UCS_PTR_IS_PTR(request)) return UCS_PTR_IS_ERR(request) ? NoticeSend::failed : NoticeSend::sent;
  while (ucx().ucp_request_check_status(request) == UCS_INPROGRESS) {
    if (std::chrono::steady_clock::now() >= deadline) {
      ucx().ucp_request_free(request);  // released to UCX, which completes or drops it on its own
      return NoticeSend::in_flight;
    }
    ucx().ucp_worker_progress(worker);
  }
  const ucs_status_t status = ucx().ucp_request_check_status(request);
  ucx().ucp_request_free(request);
  return status == UCS_OK ? NoticeSend::sent : NoticeSend::failed;
}

}  // namespace xffl::comm::ucx
