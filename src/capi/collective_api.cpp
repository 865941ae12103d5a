// extern "C" shims of xffl/collective.h: every argument is checked here, so backends receive valid calls.
#include <limits>

#include "capi/guard.h"
#include "comm/dtype.h"
#include "state/group.h"
#include "xffl/collective.h"

using xffl::capi::require_arg;

namespace {

void check_common(const xffl_group_t *group, size_t count, int dtype, const void *stream) {
  require_arg(group, "", "group");
  if (!xffl::comm::valid_dtype(dtype)) xffl::fail(XFFL_EINVAL, "unknown dtype ", dtype);
  const size_t size = xffl::comm::dtype_size(static_cast<xffl_dtype_t>(dtype));
  const size_t members = static_cast<size_t>(group->members().size());
  if (count > std::numeric_limits<size_t>::max() / size / members)
    xffl::fail(XFFL_EINVAL, "count ", count, " of ", xffl::comm::dtype_name(static_cast<xffl_dtype_t>(dtype)),
               " overflows the address space for ", members, " members");
  if (stream && group->backend_kind() != XFFL_BACKEND_NCCL)
    xffl::fail(XFFL_EINVAL, "stream must be NULL for host memory (backend is not NCCL)");
}

void check_buffer(const void *buffer, size_t count, const char *name) {
  if (count > 0 && !buffer) xffl::fail(XFFL_EINVAL, name, " is NULL with count ", count);
}

void check_op(int op) {
  if (!xffl::comm::valid_redop(op)) xffl::fail(XFFL_EINVAL, "unknown reduction op ", op);
}

}  // namespace

extern "C" {

XFFL_API xffl_status_t xffl_allreduce(xffl_group_t *group, const void *send, void *recv, size_t count,
                                      xffl_dtype_t dtype, xffl_redop_t op, void *stream) {
  XFFL_API_BEGIN
  check_common(group, count, dtype, stream);
  check_op(op);
  check_buffer(send, count, "send");
  check_buffer(recv, count, "recv");
  group->communicator().allreduce(send, recv, count, dtype, op, stream);
  XFFL_API_END("xffl_allreduce")
}

XFFL_API xffl_status_t xffl_broadcast(xffl_group_t *group, void *buf, size_t count, xffl_dtype_t dtype, int root,
                                      void *stream) {
  XFFL_API_BEGIN
  check_common(group, count, dtype, stream);
  check_buffer(buf, count, "buf");
  const int root_index = group->members().index_of(root);
  if (root_index < 0) xffl::fail(XFFL_EINVAL, "root rank ", root, " is not a member of ", group->description());
  group->communicator().broadcast(buf, count, dtype, root_index, stream);
  XFFL_API_END("xffl_broadcast")
}

XFFL_API xffl_status_t xffl_allgather(xffl_group_t *group, const void *send, void *recv, size_t send_count,
                                      xffl_dtype_t dtype, void *stream) {
  XFFL_API_BEGIN
  check_common(group, send_count, dtype, stream);
  check_buffer(send, send_count, "send");
  check_buffer(recv, send_count, "recv");
  group->communicator().allgather(send, recv, send_count, dtype, stream);
  XFFL_API_END("xffl_allgather")
}

XFFL_API xffl_status_t xffl_reduce_scatter(xffl_group_t *group, const void *send, void *recv, size_t recv_count,
                                           xffl_dtype_t dtype, xffl_redop_t op, void *stream) {
  XFFL_API_BEGIN
  check_common(group, recv_count, dtype, stream);
  check_op(op);
  check_buffer(send, recv_count, "send");
  check_buffer(recv, recv_count, "recv");
  group->communicator().reduce_scatter(send, recv, recv_count, dtype, op, stream);
  XFFL_API_END("xffl_reduce_scatter")
}

XFFL_API xffl_status_t xffl_barrier(xffl_group_t *group) {
  XFFL_API_BEGIN
  require_arg(group, __func__, "group");
  group->communicator().barrier();
  XFFL_API_END("xffl_barrier")
}

}  // extern "C"
