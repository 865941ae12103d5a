// extern "C" shims of xffl/mesh.h.
#include <limits>
#include <vector>

#include "capi/copy_out.h"
#include "capi/guard.h"
#include "state/distributed_state.h"
#include "xffl/mesh.h"

using xffl::capi::require_arg;

extern "C" {

XFFL_API xffl_status_t xffl_get_mesh(const xffl_state_t *st, xffl_mesh_kind_t kind, int *shape, size_t shape_cap,
                                     size_t *ndim, int *ranks, size_t cap, size_t *len) {
  XFFL_API_BEGIN
  require_arg(st, "st");
  XFFL_API_ENTER_READ(st, "xffl_get_mesh");
  require_arg(ndim, "ndim");
  require_arg(len, "len");
  if (!shape && shape_cap > 0) xffl::fail(XFFL_EINVAL, "shape is NULL with capacity ", shape_cap);
  if (!ranks && cap > 0) xffl::fail(XFFL_EINVAL, "ranks is NULL with capacity ", cap);
  const xffl::topology::Mesh &mesh = st->mesh(kind);
  const size_t count = static_cast<size_t>(mesh.rank_count());
  // Both lengths are written whenever either buffer is short, so one retry with both sizes suffices.
  if (shape_cap < mesh.shape.size() || cap < count) {  // refuse before listing: a mesh can be millions of ranks
    *ndim = mesh.shape.size();
    *len = count;
    if (shape_cap < mesh.shape.size())
      xffl::fail(XFFL_EBUFSIZE, "the mesh has ", mesh.shape.size(), " dimensions, shape holds ", shape_cap);
    xffl::fail(XFFL_EBUFSIZE, "the mesh has ", count, " ranks, ranks holds ", cap);
  }
  xffl::capi::copy_out(mesh.ranks().to_vector(), ranks, cap, len, "the mesh", "ranks");
  for (size_t i = 0; i < mesh.shape.size(); ++i) shape[i] = mesh.shape[i];
  *ndim = mesh.shape.size();
  XFFL_API_END("xffl_get_mesh")
}

XFFL_API xffl_status_t xffl_create_device_mesh(const int *shape, size_t ndim, int *ranks, size_t cap, size_t *len) {
  XFFL_API_BEGIN
  require_arg(shape, "shape");
  require_arg(len, "len");
  if (ndim == 0) xffl::fail(XFFL_EINVAL, "ndim is 0; a mesh has at least one dimension");
  long long count = 1;
  for (size_t i = 0; i < ndim; ++i) {
    if (shape[i] < 1) xffl::fail(XFFL_EINVAL, "mesh extent ", shape[i], " of dimension ", i, " must be at least 1");
    count *= shape[i];
    if (count > std::numeric_limits<int>::max())
      xffl::fail(XFFL_EINVAL, "mesh of more than ", std::numeric_limits<int>::max(), " ranks");
  }
  if (!ranks && cap > 0) xffl::fail(XFFL_EINVAL, "ranks is NULL with capacity ", cap);
  *len = static_cast<size_t>(count);
  if (cap < static_cast<size_t>(count)) xffl::fail(XFFL_EBUFSIZE, "the mesh has ", count, " ranks, ranks holds ", cap);
  for (long long i = 0; i < count; ++i) ranks[i] = static_cast<int>(i);
  XFFL_API_END("xffl_create_device_mesh")
}

}  // extern "C"
