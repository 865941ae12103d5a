#include "comm/ucx/notice_receive.h"

#include <vector>

namespace xffl::comm::ucx {

bool receive_fixed_size(ucp_worker_h worker, uint64_t tag, uint64_t mask, void *buffer, size_t size,
                        std::chrono::milliseconds bound) {
  while (true) {
    ucp_tag_recv_info_t info{};
    ucp_tag_message_h message = ucx().ucp_tag_probe_nb(worker, tag, mask, 1, &info);
    if (!message) return false;
    std::vector<unsigned char> other;  // a message of another size: received and dropped
    const bool fits = info.length == size;
    if (!fits) other.resize(info.length);
    ucp_request_param_t param{};
    param.op_attr_mask = UCP_OP_ATTR_FLAG_NO_IMM_CMPL;
    ucs_status_ptr_t request =
        ucx().ucp_tag_msg_recv_nbx(worker, fits ? buffer : other.data(), info.length, message, &param);
    if (UCS_PTR_IS_ERR(request)) continue;
    const auto deadline = std::chrono::steady_clock::now() + bound;
    ucs_status_t status = UCS_OK;
    if (request) {
      while ((status = ucx().ucp_request_check_status(request)) == UCS_INPROGRESS &&
             std::chrono::steady_clock::now() < deadline)
        ucx().ucp_worker_progress(worker);
      if (status == UCS_INPROGRESS) ucx().ucp_request_cancel(worker, request);
      while (ucx().ucp_request_check_status(request) == UCS_INPROGRESS) ucx().ucp_worker_progress(worker);
      ucx().ucp_request_free(request);
    }
    if (fits && status == UCS_OK) return true;
  }
}

}  // namespace xffl::comm::ucx
