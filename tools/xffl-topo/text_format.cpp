// Text: what a person reads in a terminal before launching a job. A summary, a small picture of each
// facility's mesh with its senders, and the per-rank table of DESIGN.md section 3.3.
#include <algorithm>
#include <string>
#include <vector>

#include "formats.h"
#include "planner.h"
#include "summary.h"

namespace xffl_topo {

namespace {

// Pictures only while they fit a terminal; the table is always complete.
bool fits_terminal(const World &world) {
  if (world.world_size > 256 || world.facilities.size() > 16) return false;
  for (const auto &facility : world.facilities)
    if (facility.cols > 16 || facility.rows > 32) return false;
  return true;
}

std::string pad_left(const std::string &text, std::size_t width) {
  return text.size() >= width ? text : std::string(width - text.size(), ' ') + text;
}

std::string pad_right(const std::string &text, std::size_t width) {
  return text.size() >= width ? text : text + std::string(width - text.size(), ' ');
}

std::string centered(const std::string &text, std::size_t width) {
  if (text.size() >= width) return text;
  const std::size_t left = (width - text.size()) / 2;
  return std::string(left, ' ') + text + std::string(width - text.size() - left, ' ');
}

void write_mesh_picture(std::ostream &out, const World &world, const Facility &facility) {
  const std::size_t digits = std::to_string(std::max(world.world_size - 1, 0)).size();
  const std::string last_shard = "shard " + std::to_string(facility.cols - 1);
  const std::size_t cell = std::max(digits + 2, world.hsdp ? last_shard.size() : 0) + 2;
  const std::size_t label = 14;
  auto trimmed = [](std::string line) {
    while (!line.empty() && line.back() == ' ') line.pop_back();
    return line;
  };
  if (world.hsdp) {
    std::string header(label, ' ');
    for (int c = 0; c < facility.cols; ++c) header += centered("shard " + std::to_string(c), cell);
    out << trimmed(header) << "\n";
  }
  for (int row = 0; row < facility.rows; ++row) {
    std::string line = pad_right(world.hsdp ? "    replica " + std::to_string(row) : "    FSDP", label);
    for (int c = 0; c < facility.cols; ++c) {
      const int r = facility.first_rank + row * facility.cols + c;
      const bool sender = world.federated() && world.hsdp && world.ranks[static_cast<std::size_t>(r)].is_sender.value_or(false);
      line += centered(sender ? "[" + std::to_string(r) + "]" : std::to_string(r), cell);
    }
    out << trimmed(line) << "\n";
  }
}

std::string value_or_dash(const std::optional<int> &value) { return value ? std::to_string(*value) : "-"; }

// The table's group columns: FSDP only when it is not also the FEDERATION, HSDP_REPLICA only when it
// is not also the REPLICA group, so no column repeats another.
std::vector<GroupColumn> table_group_columns(const World &world) {
  std::vector<GroupColumn> columns;
  auto present = [&](GroupColumn c) { return world.groups[c].present(); };
  if (present(kFsdp) && !present(kFederation)) columns.push_back(kFsdp);
  if (present(kFederated)) columns.push_back(kFederated);
  if (present(kReplica))
    columns.push_back(kReplica);
  else if (present(kHsdpReplica))
    columns.push_back(kHsdpReplica);
  if (present(kHsdpShard)) columns.push_back(kHsdpShard);
  if (present(kFederation)) columns.push_back(kFederation);
  return columns;
}

void write_table(std::ostream &out, const World &world) {
  struct Column {
    std::string title;
    std::vector<std::string> cells;
    bool left = false;  // rank lists read better left-aligned
  };
  std::vector<Column> columns;
  const auto &ranks = world.ranks;
  auto scalar = [&](const char *title, auto get) {
    Column column{title, {}, false};
    bool any = false;
    for (const auto &info : ranks) {
      const std::optional<int> v = get(info);
      any = any || v.has_value();
      column.cells.push_back(value_or_dash(v));
    }
    if (any) columns.push_back(std::move(column));
  };
  scalar("r", [](const RankInfo &i) { return std::optional<int>(i.rank); });
  scalar("node", [](const RankInfo &i) { return i.node_rank; });
  scalar("local", [](const RankInfo &i) { return i.node_local_rank; });
  scalar("fl", [](const RankInfo &i) { return i.federated_local_rank; });
  scalar("f", [](const RankInfo &i) { return i.federated_rank; });
  scalar("rl", [](const RankInfo &i) { return i.replica_local_rank; });
  scalar("rr", [](const RankInfo &i) { return i.replica_rank; });
  if (world.federated()) {
    Column sender{"sender", {}, true}, from{"receive_from", {}, true};
    for (const auto &info : ranks) {
      sender.cells.push_back(info.is_sender ? (*info.is_sender ? "yes" : "no") : "-");
      from.cells.push_back(value_or_dash(info.receive_from));
    }
    columns.push_back(std::move(sender));
    columns.push_back(std::move(from));
  }
  for (GroupColumn kind : table_group_columns(world)) {
    const GroupTable &table = world.groups[kind];
    std::vector<std::string> text_of_group(table.groups.size());  // each group formatted once
    for (std::size_t g = 0; g < table.groups.size(); ++g) text_of_group[g] = compact_ranks(table.groups[g], 32);
    Column column{group_column_name(kind), {}, true};
    for (const auto &info : ranks) {
      const int id = table.group_of_rank[static_cast<std::size_t>(info.rank)];
      column.cells.push_back(id < 0 ? "-" : text_of_group[static_cast<std::size_t>(id)]);
    }
    columns.push_back(std::move(column));
  }

  std::vector<std::size_t> widths;
  for (const auto &column : columns) {
    std::size_t width = column.title.size();
    for (const auto &cell : column.cells) width = std::max(width, cell.size());
    widths.push_back(width);
  }
  auto line = [&](auto cell_of) {
    std::string text;
    for (std::size_t c = 0; c < columns.size(); ++c) {
      const std::string cell = cell_of(c);
      text += (c ? "  " : "  ") + (columns[c].left ? pad_right(cell, widths[c]) : pad_left(cell, widths[c]));
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out << text << "\n";
  };
  line([&](std::size_t c) { return columns[c].title; });
  std::string rule;
  for (std::size_t c = 0; c < columns.size(); ++c) rule += "  " + std::string(widths[c], '-');
  out << rule << "\n";
  for (std::size_t r = 0; r < ranks.size(); ++r) line([&](std::size_t c) { return columns[c].cells[r]; });
}

}  // namespace

void write_text_world(std::ostream &out, const World &world) {
  out << "xffl plan of " << layout_summary(world) << "\n";
  out << crossing_summary(world) << "\n\n";

  const bool picture = fits_terminal(world);
  const std::size_t n = world.facilities.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (n > 16 && i == 8) {
      out << "  .. " << plural(static_cast<long long>(n - 10), "more facility", "more facilities") << " ..\n";
      i = n - 2;
    }
    const Facility &facility = world.facilities[i];
    out << facility_summary(world, facility) << "\n";
    if (picture) write_mesh_picture(out, world, facility);
  }
  if (picture && world.federated() && world.hsdp)
    out << "  [n] sender: averages its shard with the other facilities, then sends it down its shard column\n";
  if (!picture) out << "  (the mesh pictures are left out: more than 256 ranks, 16 facilities or 16 shards)\n";
  out << "\n";
  write_table(out, world);
}

void write_text(std::ostream &out, const Options &options) {
  if (options.rank) {
    out << describe(plan_rank(options, *options.rank).get(), XFFL_FORMAT_TEXT) << "\n";
    return;
  }
  write_text_world(out, plan_world(options));
}

}  // namespace xffl_topo
