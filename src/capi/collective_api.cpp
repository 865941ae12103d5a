// extern "C" shims of xffl/collective.h: every argument is checked here, so backends receive valid calls.
#include <limits>
#include <vector>

#include "capi/guard.h"
#include "comm/dtype.h"
#include "state/group.h"
#include "xffl/collective.h"

using xffl::capi::require_arg;

namespace {

void check_common(const xffl_group_t *group, size_t count, int dtype, const void *stream) {
  require_arg(group, "group");
  if (!xffl::comm::valid_dtype(dtype)) xffl::fail(XFFL_EINVAL, "unknown dtype ", dtype);
  const size_t size = xffl::comm::dtype_size(static_cast<xffl_dtype_t>(dtype));
  const size_t members = static_cast<size_t>(group->members().size());
  if (count > std::numeric_limits<size_t>::max() / size / members)
    xffl::fail(XFFL_EINVAL, "count ", count, " of ", xffl::comm::dtype_name(static_cast<xffl_dtype_t>(dtype)),
               " overflows the address space for ", members, " members");
  group->check_stream(stream);
}

void check_buffer(const void *buffer, size_t count, const char *name) {
  if (count > 0 && !buffer) xffl::fail(XFFL_EINVAL, name, " is NULL with count ", count);
}

bool overlap(const void *a, size_t a_bytes, const void *b, size_t b_bytes) {
  const auto *x = static_cast<const unsigned char *>(a), *y = static_cast<const unsigned char *>(b);
  return a_bytes && b_bytes && x < y + b_bytes && y < x + a_bytes;
}

// reduce_scatter and allgather read and write buffers of different sizes. Backends take NCCL's in-place
// layout (`in_place` says whether send and recv are in it); any other overlap is served from a private
// copy of the input, so a backend never sees buffers that alias any other way.
const void *detach_input(const xffl_group_t *group, const void *send, size_t send_bytes, const void *recv,
                         size_t recv_bytes, bool in_place, std::vector<unsigned char> &copy) {
  if (in_place || !overlap(send, send_bytes, recv, recv_bytes)) return send;
  if (group->memory_kind() == xffl::comm::MemoryKind::kDevice)  // not copied through the host
    xffl::fail(XFFL_EINVAL, "send and recv overlap outside NCCL's in-place layout");
  const auto *bytes = static_cast<const unsigned char *>(send);
  copy.assign(bytes, bytes + send_bytes);
  return copy.data();
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
  XFFL_API_ENTER(group, "xffl_allreduce");
  check_op(op);
  check_buffer(send, count, "send");
  check_buffer(recv, count, "recv");
  const size_t bytes = count * xffl::comm::dtype_size(dtype);
  if (send != recv && overlap(send, bytes, recv, bytes))
    xffl::fail(XFFL_EINVAL, "send and recv overlap without being the same buffer");
  group->communicator().allreduce(send, recv, count, dtype, op, stream);
  XFFL_API_END("xffl_allreduce")
}

XFFL_API xffl_status_t xffl_broadcast(xffl_group_t *group, void *buf, size_t count, xffl_dtype_t dtype, int root,
                                      void *stream) {
  XFFL_API_BEGIN
  check_common(group, count, dtype, stream);
  XFFL_API_ENTER(group, "xffl_broadcast");
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
  XFFL_API_ENTER(group, "xffl_allgather");
  check_buffer(send, send_count, "send");
  check_buffer(recv, send_count, "recv");
  const size_t bytes = send_count * xffl::comm::dtype_size(dtype);
  std::vector<unsigned char> copy;
  const bool in_place = send == static_cast<const unsigned char *>(recv) + bytes * static_cast<size_t>(group->my_index());
  send = detach_input(group, send, bytes, recv, bytes * static_cast<size_t>(group->members().size()), in_place, copy);
  group->communicator().allgather(send, recv, send_count, dtype, stream);
  XFFL_API_END("xffl_allgather")
}

XFFL_API xffl_status_t xffl_reduce_scatter(xffl_group_t *group, const void *send, void *recv, size_t recv_count,
                                           xffl_dtype_t dtype, xffl_redop_t op, void *stream) {
  XFFL_API_BEGIN
  check_common(group, recv_count, dtype, stream);
  XFFL_API_ENTER(group, "xffl_reduce_scatter");
  check_op(op);
  check_buffer(send, recv_count, "send");
  check_buffer(recv, recv_count, "recv");
  const size_t bytes = recv_count * xffl::comm::dtype_size(dtype);
  std::vector<unsigned char> copy;
  const bool in_place = recv == static_cast<const unsigned char *>(send) + bytes * static_cast<size_t>(group->my_index());
  send = detach_input(group, send, bytes * static_cast<size_t>(group->members().size()), recv, bytes, in_place, copy);
  group->communicator().reduce_scatter(send, recv, recv_count, dtype, op, stream);
  XFFL_API_END("xffl_reduce_scatter")
}

XFFL_API xffl_status_t xffl_barrier(xffl_group_t *group) {
  XFFL_API_BEGIN
  require_arg(group, "group");
  XFFL_API_ENTER(group, "xffl_barrier");
  group->communicator().barrier();
  XFFL_API_END("xffl_barrier")
}

}  // extern "C"
