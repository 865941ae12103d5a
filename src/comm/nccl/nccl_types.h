// xffl's vocabulary in NCCL's words (dtype, reduction), and NCCL's and CUDA's failures as xffl statuses.
#ifndef XFFL_SRC_COMM_NCCL_NCCL_TYPES_H
#define XFFL_SRC_COMM_NCCL_NCCL_TYPES_H

#include <string>

#include "comm/nccl/nccl_api.h"
#include "xffl/types.h"

namespace xffl::comm::nccl {

NcclType to_nccl_type(xffl_dtype_t dtype);  // every xffl dtype has a native NCCL type (bf16 and f16 too)
NcclOp to_nccl_op(xffl_redop_t op);         // AVG is native (ncclAvg), never a sum then a division

// The status for a failed CUDA call: no device, no driver or a stub driver is XFFL_EUNSUPPORTED (this
// machine cannot run CUDA code at all), anything else XFFL_EBACKEND.
xffl_status_t status_of_cuda(int cuda_code);
// The status for a communicator's asynchronous error: a remote or system (network) error means a peer
// failed (XFFL_EPEER); anything else is NCCL refusing (XFFL_EBACKEND).
xffl_status_t status_of_async_nccl(int nccl_code);

// Throws xffl::Error with CUDA's own words: "<what>: cudaErrorNoDevice: no CUDA-capable device is detected".
[[noreturn]] void fail_cuda(NcclApi &api, int cuda_code, const std::string &what);
// Throws XFFL_EBACKEND with NCCL's own words.
[[noreturn]] void fail_nccl(NcclApi &api, int nccl_code, Comm comm, const std::string &what);

}  // namespace xffl::comm::nccl

#endif
