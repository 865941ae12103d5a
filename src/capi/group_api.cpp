// extern "C" shims of xffl/group.h.
#include <memory>
#include <vector>

#include "capi/copy_out.h"
#include "capi/guard.h"
#include "state/distributed_state.h"
#include "xffl/group.h"

using xffl::capi::require_arg;

extern "C" {

XFFL_API xffl_status_t xffl_get_group(const xffl_state_t *st, xffl_group_kind_t kind, int instance,
                                      xffl_group_t **out) {
  XFFL_API_BEGIN
  require_arg(st, "st");
  XFFL_API_ENTER_READ(st, "xffl_get_group");
  require_arg(out, "out");
  *out = st->group(kind, instance);
  XFFL_API_END("xffl_get_group")
}

XFFL_API xffl_status_t xffl_create_process_group(xffl_state_t *st, const int *ranks, size_t n,
                                                 const char *description, xffl_group_t **out) {
  XFFL_API_BEGIN
  require_arg(st, "st");
  XFFL_API_ENTER(st, "xffl_create_process_group");
  require_arg(ranks, "ranks");
  require_arg(out, "out");
  if (n == 0) xffl::fail(XFFL_EINVAL, "n is 0; a process group needs at least one rank");
  *out = st->create_process_group(std::vector<int>(ranks, ranks + n), description ? description : "custom").release();
  XFFL_API_END("xffl_create_process_group")
}

XFFL_API void xffl_group_destroy(xffl_group_t *group) {
  if (!group || !group->owned()) return;  // borrowed groups belong to their state
  try {
    delete group;
  } catch (...) {
  }
}

XFFL_API xffl_status_t xffl_group_size(const xffl_group_t *group, int *size) {
  XFFL_API_BEGIN
  require_arg(group, "group");
  require_arg(size, "size");
  *size = group->members().size();
  XFFL_API_END("xffl_group_size")
}

XFFL_API xffl_status_t xffl_group_rank(const xffl_group_t *group, int *rank) {
  XFFL_API_BEGIN
  require_arg(group, "group");
  require_arg(rank, "rank");
  *rank = group->my_index();
  XFFL_API_END("xffl_group_rank")
}

XFFL_API xffl_status_t xffl_group_ranks(const xffl_group_t *group, int *buf, size_t cap, size_t *len) {
  XFFL_API_BEGIN
  require_arg(group, "group");
  require_arg(len, "len");
  if (!buf && cap > 0) xffl::fail(XFFL_EINVAL, "buf is NULL with capacity ", cap);
  if (cap < static_cast<size_t>(group->members().size())) {  // no copy of a large member list just to refuse
    *len = static_cast<size_t>(group->members().size());
    xffl::fail(XFFL_EBUFSIZE, "the group has ", group->members().size(), " members, buf holds ", cap);
  }
  xffl::capi::copy_out(group->members().to_vector(), buf, cap, len, "the group");
  XFFL_API_END("xffl_group_ranks")
}

XFFL_API const char *xffl_group_description(const xffl_group_t *group) {
  return group ? group->description().c_str() : "";
}

}  // extern "C"
