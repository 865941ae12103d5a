#include "comm/nccl/nccl_types.h"

#include "common/error.h"

namespace xffl::comm::nccl {

NcclType to_nccl_type(xffl_dtype_t dtype) {
  switch (dtype) {
    case XFFL_F32: return kNcclFloat32;
    case XFFL_F64: return kNcclFloat64;
    case XFFL_F16: return kNcclFloat16;
    case XFFL_BF16: return kNcclBfloat16;
    case XFFL_I8: return kNcclInt8;
    case XFFL_U8: return kNcclUint8;
    case XFFL_I32: return kNcclInt32;
    case XFFL_I64: return kNcclInt64;
  }
  fail(XFFL_EINVAL, "dtype ", static_cast<int>(dtype), " has no NCCL type");
}

NcclOp to_nccl_op(xffl_redop_t op) {
  switch (op) {
    case XFFL_SUM: return kNcclSum;
    case XFFL_AVG: return kNcclAvg;
    case XFFL_MIN: return kNcclMin;
    case XFFL_MAX: return kNcclMax;
    case XFFL_PROD: return kNcclProd;
  }
  fail(XFFL_EINVAL, "reduction op ", static_cast<int>(op), " has no NCCL op");
}

xffl_status_t status_of_cuda(int cuda_code) {
  switch (cuda_code) {
    case kCudaErrorNoDevice:
    case kCudaErrorInsufficientDriver:
    case kCudaErrorStubLibrary:
    case kCudaErrorDevicesUnavailable: return XFFL_EUNSUPPORTED;
    default: return XFFL_EBACKEND;
  }
}

xffl_status_t status_of_async_nccl(int nccl_code) {
  return nccl_code == kNcclRemoteError || nccl_code == kNcclSystemError ? XFFL_EPEER : XFFL_EBACKEND;
}

void fail_cuda(NcclApi &api, int cuda_code, const std::string &what) {
  fail(status_of_cuda(cuda_code), what, ": ", api.cuda_error_string(cuda_code));
}

void fail_nccl(NcclApi &api, int nccl_code, Comm comm, const std::string &what) {
  fail(XFFL_EBACKEND, what, ": NCCL says ", api.nccl_error_string(nccl_code, comm));
}

}  // namespace xffl::comm::nccl
