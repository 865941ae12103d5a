// Graphviz source of the same picture as the SVG: facilities as clusters, each mesh as rows of
// replicas (rank=same) stacked by invisible edges so columns are shards; senders filled and bold;
// FEDERATED groups as coloured edges between facilities; receive_from as faint dashed arrows.
#include <string>
#include <vector>

#include "formats.h"
#include "picture.h"
#include "summary.h"

namespace xffl_topo {

namespace {

// A double-quoted DOT string.
std::string quoted(const std::string &text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

// A quoted label whose lines are all left-justified (graphviz's "\l" line ends).
std::string left_justified(const std::string &text) {
  std::string out = quoted(text + "\n");
  for (std::size_t at = out.find("\\n"); at != std::string::npos; at = out.find("\\n", at)) out[at + 1] = 'l';
  return out;
}

std::string node_id(int rank) { return "r" + std::to_string(rank); }

std::string shape_text(const World &world, const Facility &f) {
  if (!world.hsdp) return "FSDP over " + plural(f.cols, "rank");
  return plural(f.rows, "replica") + " x " + plural(f.cols, "shard");
}

std::string range_text(const Facility &f) {
  return "ranks " + std::to_string(f.first_rank) + "-" + std::to_string(f.first_rank + f.size() - 1);
}

std::string title(const World &world, const Facility &f) {
  return world.federated() ? "facility " + std::to_string(f.index) : std::string("all ranks");
}

void write_header(std::ostream &out, const World &world, const Picture &picture) {
  std::string label = "xffl plan of " + layout_summary(world) + "\n" + crossing_summary(world);
  if (!picture.detailed)
    label += "\nsummary view: " + picture.why_summary + "; each facility is shown as its mesh shape";
  if (picture.highlight >= 0) label += "\nrank " + std::to_string(picture.highlight) + " is outlined";
  out << "digraph xffl_plan {\n"
      << "  graph [fontname=\"Helvetica\", fontsize=14, labelloc=t, labeljust=l, newrank=true, nodesep=0.12,"
      << " ranksep=0.22, label=" << left_justified(label) << "];\n"
      << "  node [shape=box, style=\"rounded,filled\", fillcolor=\"#ffffff\", color=\"#9aa5b1\","
      << " fontname=\"Helvetica\", fontsize=12, width=0.6, height=0.45, fixedsize=true];\n"
      << "  edge [fontname=\"Helvetica\", fontsize=9];\n";
}

void write_rank_node(std::ostream &out, const World &world, const Picture &picture, int r) {
  const RankInfo &info = world.ranks[static_cast<std::size_t>(r)];
  const int lane = picture.lane_of_rank[static_cast<std::size_t>(r)];
  const bool sender = world.federated() && info.is_sender.value_or(false);
  std::string label = "<" + std::to_string(r);
  if (info.receive_from)
    label += "<BR/><FONT POINT-SIZE=\"8\" COLOR=\"#829ab1\">&larr; " + std::to_string(*info.receive_from) + "</FONT>";
  if (info.node_rank)
    label += "<BR/><FONT POINT-SIZE=\"7\" COLOR=\"#9aa5b1\">node " + std::to_string(*info.node_rank) + "</FONT>";
  label += ">";
  out << "    " << node_id(r) << " [label=" << label;
  if (lane >= 0) out << ", fillcolor=" << quoted(lane_tint(lane));
  else if (!world.federated()) out << ", fillcolor=\"#eef2f7\"";
  if (sender) out << ", color=" << quoted(lane >= 0 ? lane_color(lane) : "#1f2933") << ", penwidth=2.5";
  if (r == picture.highlight) out << ", peripheries=2, style=\"rounded,filled,bold\"";
  std::string tip = "rank " + std::to_string(r);
  if (info.replica_rank) tip += ", replica " + std::to_string(*info.replica_rank);
  if (info.replica_local_rank) tip += ", shard " + std::to_string(*info.replica_local_rank);
  if (info.is_sender) tip += *info.is_sender ? ", sender" : ", receives from " + std::to_string(info.receive_from.value_or(-1));
  out << ", tooltip=" << quoted(tip) << "];\n";
}

void write_detailed(std::ostream &out, const World &world, const Picture &picture) {
  for (int index : picture.facilities) {
    const Facility &f = world.facilities[static_cast<std::size_t>(index)];
    out << "  subgraph cluster_facility_" << f.index << " {\n"
        << "    label=" << quoted(title(world, f) + "\n" + range_text(f) + ", " + shape_text(world, f))
        << "; style=\"rounded,filled\"; fillcolor=\"#f5f7fa\"; color=\"#9fb3c8\"; fontsize=12;\n";
    for (int r = f.first_rank; r < f.first_rank + f.size(); ++r) write_rank_node(out, world, picture, r);
    for (int row = 0; row < f.rows; ++row) {  // a replica per row
      out << "    { rank=same;";
      for (int col = 0; col < f.cols; ++col) out << " " << node_id(f.first_rank + row * f.cols + col) << ";";
      out << " }\n";
      for (int col = 0; col + 1 < f.cols; ++col)  // shards in order along the row
        out << "    " << node_id(f.first_rank + row * f.cols + col) << " -> "
            << node_id(f.first_rank + row * f.cols + col + 1) << " [style=invis];\n";
    }
    for (int row = 0; row + 1 < f.rows; ++row)  // shards line up in columns
      for (int col = 0; col < f.cols; ++col)
        out << "    " << node_id(f.first_rank + row * f.cols + col) << " -> "
            << node_id(f.first_rank + (row + 1) * f.cols + col) << " [style=invis, weight=10];\n";
    out << "  }\n";
  }
  out << "  // FEDERATED groups: the traffic between facilities\n";
  for (std::size_t l = 0; l < picture.lanes.size(); ++l) {
    const char *color = lane_color(static_cast<int>(l));
    for (const auto *group : world.crossing_groups()) {
      if (picture.lane_of_rank[static_cast<std::size_t>(group->front())] != static_cast<int>(l)) continue;
      for (std::size_t i = 0; i + 1 < group->size(); ++i)
        out << "  " << node_id((*group)[i]) << " -> " << node_id((*group)[i + 1]) << " [dir=none, color=" << quoted(color)
            << ", penwidth=2.2, constraint=false, tooltip=" << quoted(picture.lanes[l].label) << "];\n";
    }
  }
  out << "  // receive_from: each non-sender gets its shard from the sender of its column\n";
  for (const auto &info : world.ranks)
    if (info.receive_from)
      out << "  " << node_id(*info.receive_from) << " -> " << node_id(info.rank)
          << " [color=\"#c3ccd6\", style=dashed, arrowsize=0.4, constraint=false];\n";
}

void write_summary(std::ostream &out, const World &world, const Picture &picture) {
  std::string previous;
  for (int index : picture.facilities) {
    std::string id;
    if (index < 0) {
      id = "left_out";
      out << "  " << id << " [shape=box, style=\"rounded,dashed\", fixedsize=false, label="
          << quoted(plural(picture.left_out, "more facility", "more facilities")) << "];\n";
    } else {
      const Facility &f = world.facilities[static_cast<std::size_t>(index)];
      id = "facility_" + std::to_string(f.index);
      std::string label = title(world, f) + "\n" + range_text(f) + " (" + std::to_string(f.size()) + ")\n" +
                          shape_text(world, f);
      if (world.federated() && world.hsdp)
        label += "\n" + plural(static_cast<long long>(facility_senders(world, f).size()), "sender") + ": " +
                 compact_ranks(facility_senders(world, f), 30);
      out << "  " << id << " [shape=box, style=\"rounded,filled\", fillcolor=\"#f5f7fa\", color=\"#9fb3c8\","
          << " fixedsize=false, margin=\"0.2,0.1\", label=" << quoted(label) << "];\n";
    }
    if (!previous.empty())
      for (std::size_t l = 0; l < picture.lanes.size(); ++l)
        out << "  " << previous << " -> " << id << " [dir=none, color=" << quoted(lane_color(static_cast<int>(l)))
            << ", penwidth=2" << (l == 0 ? ", label=" + quoted(plural(static_cast<long long>(world.crossing_groups().size()), "FEDERATED group")) : "")
            << ", tooltip=" << quoted(picture.lanes[l].label) << "];\n";
    previous = id;
  }
  if (!picture.facilities.empty()) {
    out << "  { rank=same;";
    for (int index : picture.facilities) out << " " << (index < 0 ? "left_out" : "facility_" + std::to_string(index)) << ";";
    out << " }\n";
  }
}

void write_legend(std::ostream &out, const World &world, const Picture &picture) {
  if (!world.federated()) return;
  const char *color = picture.lanes.empty() ? "#1f2933" : lane_color(0);
  const char *tint = picture.lanes.empty() ? "#ffffff" : lane_tint(0);
  auto row = [](const std::string &swatch, const std::string &text) {
    return "<TR><TD WIDTH=\"28\" " + swatch + "</TD><TD ALIGN=\"LEFT\">" + text + "</TD></TR>";
  };
  out << "  legend [shape=plaintext, fixedsize=false, fontsize=10, label=<<TABLE BORDER=\"1\" COLOR=\"#d9e2ec\""
      << " CELLBORDER=\"0\" CELLSPACING=\"4\" CELLPADDING=\"3\"><TR><TD COLSPAN=\"2\" ALIGN=\"LEFT\"><B>legend</B></TD></TR>"
      << row(std::string("BGCOLOR=\"") + tint + "\" BORDER=\"2\" COLOR=\"" + color + "\">",
             "sender: averages its shard with the other facilities")
      << (world.hsdp && picture.detailed ? row("BORDER=\"1\" COLOR=\"#9aa5b1\">&larr;", "&larr; n: receives its shard from sender n (dashed)") : "")
      << row(std::string("><FONT COLOR=\"") + color + "\"><B>&mdash;&mdash;</B></FONT>",
             "FEDERATED group: cross-facility all-reduce (colour = group)")
      << "</TABLE>>];\n";
}

}  // namespace

void write_dot(std::ostream &out, const World &world, const Options &options) {
  const Picture picture = plan_picture(world, options.rank.value_or(-1));
  write_header(out, world, picture);
  if (picture.detailed)
    write_detailed(out, world, picture);
  else
    write_summary(out, world, picture);
  write_legend(out, world, picture);
  out << "}\n";
}

}  // namespace xffl_topo
