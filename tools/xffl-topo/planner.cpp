#include "planner.h"

#include <string>
#include <vector>

namespace xffl_topo {

namespace {

void check(xffl_status_t rc) {
  if (rc != XFFL_OK) throw LibraryError(xffl_last_error_message());
}

// A field that Python would hold as None reads as nullopt.
std::optional<int> get_optional(const xffl_state_t *st, xffl_attr_t attr) {
  int value = 0;
  const xffl_status_t rc = xffl_get_int(st, attr, &value);
  if (rc == XFFL_ENOTSET) return std::nullopt;
  check(rc);
  return value;
}

std::vector<int> get_tuple(const xffl_state_t *st, xffl_attr_t attr) {
  std::size_t len = 0;
  xffl_status_t rc = xffl_get_ints(st, attr, nullptr, 0, &len);
  if (rc == XFFL_ENOTSET) return {};
  if (rc != XFFL_EBUFSIZE) check(rc);
  std::vector<int> values(len);
  check(xffl_get_ints(st, attr, values.data(), values.size(), &len));
  return values;
}

// Same mistake in the library or here: never draw a plan the ranks would not agree on.
[[noreturn]] void inconsistent(int rank, GroupColumn column, const std::string &what) {
  throw LibraryError(std::string("inconsistent plan: the ") + group_column_name(column) + " group of rank " +
                     std::to_string(rank) + " " + what);
}

// Records rank's group of one kind. Each distinct group is fetched once, by its first member seen;
// later members only check their size and position against it, so the world costs O(W) here.
void record_group(GroupTable &table, GroupColumn column, const xffl_group_t *group, int rank, int world) {
  int size = 0, index = 0;
  check(xffl_group_size(group, &size));
  check(xffl_group_rank(group, &index));
  const int known = table.group_of_rank[static_cast<std::size_t>(rank)];
  if (known >= 0) {
    const std::vector<int> &members = table.groups[static_cast<std::size_t>(known)];
    if (static_cast<int>(members.size()) != size || index < 0 || index >= size ||
        members[static_cast<std::size_t>(index)] != rank)
      inconsistent(rank, column, "differs from the one its other members computed");
    return;
  }
  std::vector<int> members(static_cast<std::size_t>(size));
  std::size_t len = 0;
  check(xffl_group_ranks(group, members.data(), members.size(), &len));
  const int id = static_cast<int>(table.groups.size());
  for (int member : members) {
    if (member < 0 || member >= world) inconsistent(rank, column, "has member " + std::to_string(member) + " outside the world");
    int &slot = table.group_of_rank[static_cast<std::size_t>(member)];
    if (slot >= 0) inconsistent(rank, column, "overlaps another group at rank " + std::to_string(member));
    slot = id;
  }
  if (table.group_of_rank[static_cast<std::size_t>(rank)] != id) inconsistent(rank, column, "does not contain it");
  table.groups.push_back(std::move(members));
}

// The mesh of a facility, read from its first rank: rows are replicas, columns are shards.
Facility read_facility(const xffl_state_t *st, int index, bool hsdp) {
  const xffl_mesh_kind_t kind = hsdp ? XFFL_MESH_HSDP : XFFL_MESH_FSDP;
  int shape[2] = {0, 0};
  std::size_t ndim = 0, len = 0;
  const xffl_status_t rc = xffl_get_mesh(st, kind, shape, 2, &ndim, nullptr, 0, &len);
  if (rc != XFFL_EBUFSIZE) check(rc);
  std::vector<int> ranks(len);
  check(xffl_get_mesh(st, kind, shape, 2, &ndim, ranks.data(), ranks.size(), &len));
  Facility facility;
  facility.index = index;
  facility.first_rank = ranks.empty() ? 0 : ranks[0];
  facility.rows = ndim == 2 ? shape[0] : 1;
  facility.cols = ndim == 2 ? shape[1] : shape[0];
  for (std::size_t i = 0; i < ranks.size(); ++i)
    if (ranks[i] != facility.first_rank + static_cast<int>(i))
      throw LibraryError("inconsistent plan: the mesh of facility " + std::to_string(index) +
                         " is not a row-major grid of consecutive ranks");
  return facility;
}

}  // namespace

StateHandle plan_rank(const Options &options, int rank) {
  xffl_state_t *raw = nullptr;
  check(xffl_state_create(&raw));
  StateHandle st(raw);
  const int world = options.world;
  check(xffl_set_global(st.get(), XFFL_BACKEND_NONE, XFFL_DEVICE_CPU, "127.0.0.1", 0, rank, world));
  if (options.node_size) {
    const int local = *options.node_size;
    // Guard the arithmetic only; the library judges the values (size < 1, not dividing the world).
    if (local > 0)
      check(xffl_set_node(st.get(), rank % local, local, rank / local, world / local));
    else
      check(xffl_set_node(st.get(), 0, local, 0, 0));
  }
  check(xffl_set_exec_device(st.get(), -1, options.streams));
  if (!options.federated.empty())
    check(xffl_federated_scaling(st.get(), options.federated.data(), options.federated.size(),
                                 options.hsdp.value_or(0)));
  else if (options.hsdp && *options.hsdp != 0)  // --hsdp 0 means no HSDP, as it does with --federated
    check(xffl_set_hsdp(st.get(), *options.hsdp));
  else
    check(xffl_set_fsdp(st.get()));
  return st;
}

std::string describe(const xffl_state_t *st, xffl_format_t format) {
  std::size_t len = 0;
  const xffl_status_t rc = xffl_state_describe(st, format, nullptr, 0, &len);
  if (rc != XFFL_EBUFSIZE) check(rc);
  std::string text(len + 1, '\0');
  check(xffl_state_describe(st, format, &text[0], text.size(), &len));
  text.resize(len);
  return text;
}

World plan_world(const Options &options) {
  World world;
  world.world_size = options.world;
  world.node_size = options.node_size;
  world.streams = options.streams;
  const std::size_t n = options.world > 0 ? static_cast<std::size_t>(options.world) : 0;
  world.ranks.reserve(n);
  for (auto &table : world.groups) table.group_of_rank.assign(n, -1);

  for (int r = 0; r < options.world; ++r) {
    StateHandle st = plan_rank(options, r);
    const xffl_state_t *s = st.get();
    if (r == 0) {
      world.hsdp = xffl_is_hsdp_setup(s) ? get_optional(s, XFFL_ATTR_HSDP) : std::nullopt;
      world.federated_sizes = get_tuple(s, XFFL_ATTR_FEDERATED_LOCAL_SIZE);
      world.replica_world_size = get_tuple(s, XFFL_ATTR_REPLICA_WORLD_SIZE);
    }
    // Read only what the layout has: the library reports an unset field as an error (ENOTSET), and
    // thirteen errors per rank would cost more than the plan itself.
    const bool node = xffl_is_node_setup(s) != 0;
    const bool federated = xffl_is_federated_scaling_setup(s) != 0;
    const bool hsdp = xffl_is_hsdp_setup(s) != 0;
    RankInfo info;
    info.rank = r;
    if (node) {
      info.node_local_rank = get_optional(s, XFFL_ATTR_NODE_LOCAL_RANK);
      info.node_rank = get_optional(s, XFFL_ATTR_NODE_RANK);
    }
    if (federated) {
      info.federated_local_rank = get_optional(s, XFFL_ATTR_FEDERATED_LOCAL_RANK);
      info.federated_rank = get_optional(s, XFFL_ATTR_FEDERATED_RANK);
      if (const auto sender = get_optional(s, XFFL_ATTR_IS_SENDER)) info.is_sender = *sender != 0;
      if (!info.is_sender.value_or(true)) info.receive_from = get_optional(s, XFFL_ATTR_RECEIVE_FROM);
    }
    if (hsdp) {
      info.replica_local_rank = get_optional(s, XFFL_ATTR_REPLICA_LOCAL_RANK);
      info.replica_rank = get_optional(s, XFFL_ATTR_REPLICA_RANK);
    }

    for (int c = 0; c < kGroupColumns; ++c) {
      const auto column = static_cast<GroupColumn>(c);
      const bool expected = column == kFsdp                                  ? xffl_is_fsdp_setup(s) != 0
                            : column == kHsdpReplica || column == kHsdpShard ? hsdp
                            : column == kReplica                             ? federated && hsdp
                                                                             : federated;
      if (!expected) continue;
      xffl_group_t *group = nullptr;
      const xffl_status_t rc = xffl_get_group(s, group_kind(column), 0, &group);
      if (rc == XFFL_ENOTSET) continue;
      check(rc);
      record_group(world.groups[static_cast<std::size_t>(c)], column, group, r, options.world);
    }

    const int facility = info.federated_rank.value_or(0);
    if (facility == static_cast<int>(world.facilities.size()))
      world.facilities.push_back(read_facility(s, facility, world.hsdp.has_value()));
    world.ranks.push_back(info);
  }
  return world;
}

}  // namespace xffl_topo
