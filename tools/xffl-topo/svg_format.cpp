// SVG: facilities as boxes side by side, each holding its mesh (replicas as rows, shards as columns).
// Cross-facility FEDERATED groups run as coloured buses above the boxes and drop into their member
// cells; senders have a bold border, receivers say whom they receive from. Big worlds are drawn as
// each facility's mesh shape with its first ranks, and the picture says so.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "formats.h"
#include "picture.h"
#include "summary.h"
#include "svg_writer.h"

namespace xffl_topo {

namespace {

constexpr double kMargin = 24;
constexpr double kCellW = 54, kCellH = 44, kCellGap = 6;
constexpr double kPadLeft = 74, kPadTop = 30, kPadRight = 16, kCaption = 56;
constexpr double kBoxGap = 36, kLaneGap = 18;
constexpr double kMiniCell = 16, kMiniGap = 3;

const char *const kInk = "#1f2933";
const char *const kMuted = "#52606d";
const char *const kFaint = "#829ab1";
const char *const kBoxFill = "#f5f7fa";
const char *const kBoxStroke = "#9fb3c8";
const char *const kCellStroke = "#9aa5b1";

std::string fill_stroke(const std::string &fill, const std::string &stroke, double width) {
  return "fill=\"" + fill + "\" stroke=\"" + stroke + "\" stroke-width=\"" + num(width) + "\"";
}

std::string fill(const std::string &color) { return "fill=\"" + color + "\""; }

std::string rank_range(const Facility &f) {
  return std::to_string(f.first_rank) + "\u2013" + std::to_string(f.first_rank + f.size() - 1);
}

std::string mesh_shape(const World &world, const Facility &f) {
  if (!world.hsdp) return "FSDP over " + plural(f.cols, "rank");
  return plural(f.rows, "replica") + " \u00d7 " + plural(f.cols, "shard");
}

std::string facility_title(const World &world, const Facility &f) {
  return world.federated() ? "facility " + std::to_string(f.index) : std::string("all ranks");
}

struct Canvas {
  SvgWriter svg;
  double width = 0;   // grows as things are placed
  double bottom = 0;  // lowest y used so far
  void extend(double right, double low) {
    width = std::max(width, right);
    bottom = std::max(bottom, low);
  }
};

// Title, layout, cross-facility summary and (for big worlds) why the picture is a summary.
double draw_header(Canvas &c, const World &world, const Picture &picture) {
  double y = kMargin + 18;
  const std::string title = "xffl plan \u00b7 world " + std::to_string(world.world_size);
  c.svg.text(kMargin, y, title, 20, "font-weight=\"700\" " + fill(kInk));
  c.extend(kMargin + text_width(title, 20), y);
  auto line = [&](const std::string &text, double size, const std::string &style) {
    y += size + 8;
    c.svg.text(kMargin, y, text, size, style);
    c.extend(kMargin + text_width(text, size), y);
  };
  const std::string layout = layout_summary(world);  // "world W: ..." and the title already says W
  std::string shape = layout.substr(layout.find(": ") + 2);
  for (std::size_t at = shape.find(" x "); at != std::string::npos; at = shape.find(" x ", at))
    shape.replace(at, 3, " \u00d7 ");
  line(shape, 13, fill(kMuted));
  std::string crossing = crossing_summary(world);
  if (crossing.size() > 150) crossing = crossing.substr(0, 147) + "...";
  line(crossing, 13, fill(kMuted));
  if (picture.highlight >= 0) {
    const RankInfo &r = world.ranks[static_cast<std::size_t>(picture.highlight)];
    std::string text = "rank " + std::to_string(r.rank) + " (dashed outline)";
    if (r.federated_rank) text += ": facility " + std::to_string(*r.federated_rank);
    if (r.replica_rank) text += ", replica " + std::to_string(*r.replica_rank);
    if (r.replica_local_rank) text += ", shard " + std::to_string(*r.replica_local_rank);
    if (r.is_sender) text += *r.is_sender ? ", sender" : ", receives from " + std::to_string(r.receive_from.value_or(-1));
    line(text, 13, "font-weight=\"600\" " + fill(kInk));
  }
  if (!picture.detailed)
    line("Summary view: " + picture.why_summary + ". Each facility is drawn as its mesh shape, with its first " +
             std::to_string(kSummaryGrid) + " \u00d7 " + std::to_string(kSummaryGrid) + " ranks in the corner.",
         12, "font-style=\"italic\" " + fill("#9b2c2c"));
  return y + 16;
}

double lane_labels_width(const Picture &picture) {
  double width = 0;
  for (const auto &lane : picture.lanes) width = std::max(width, text_width(lane.label, 12));
  return picture.lanes.empty() ? 0 : width + 24;
}

// The buses: one horizontal line per lane, its label on the left, a dot where each drop leaves it.
void draw_lanes(Canvas &c, const Picture &picture, double label_right, double lanes_top,
                const std::vector<std::vector<double>> &drop_x) {
  for (std::size_t l = 0; l < picture.lanes.size(); ++l) {
    const int lane = static_cast<int>(l);
    const double y = lanes_top + static_cast<double>(l) * kLaneGap;
    double right = label_right;
    for (double x : drop_x[l]) right = std::max(right, x);
    c.svg.text(label_right - 12, y + 4, picture.lanes[l].label, 12,
               "font-weight=\"600\" " + fill(lane_color(lane)), "end");
    c.svg.line(label_right - 6, y, right + 6, y,
               "class=\"lane\" stroke=\"" + std::string(lane_color(lane)) + "\" stroke-width=\"3\" stroke-linecap=\"round\"");
    for (double x : drop_x[l]) c.svg.circle(x, y, 3.5, fill(lane_color(lane)));
  }
}

struct BoxPlace {
  const Facility *facility = nullptr;  // null: the facilities left out
  double x = 0, y = 0, w = 0, h = 0;
  double grid_x = 0, grid_y = 0;
};

// ---------------------------------------------------------------- every rank (small worlds)

double cell_x(const BoxPlace &b, int col) { return b.grid_x + col * (kCellW + kCellGap); }
double cell_y(const BoxPlace &b, int row) { return b.grid_y + row * (kCellH + kCellGap); }

void draw_detailed(Canvas &c, const World &world, const Picture &picture, double top) {
  const double label_w = lane_labels_width(picture);
  const double lanes_top = top + 6;
  const double boxes_top = picture.lanes.empty() ? top + 8 : lanes_top + static_cast<double>(picture.lanes.size()) * kLaneGap + 14;
  const double boxes_left = kMargin + label_w;

  std::vector<BoxPlace> boxes;
  double x = boxes_left;
  for (int index : picture.facilities) {
    const Facility &f = world.facilities[static_cast<std::size_t>(index)];
    const double grid_w = f.cols * kCellW + (f.cols - 1) * kCellGap;
    const double grid_h = f.rows * kCellH + (f.rows - 1) * kCellGap;
    BoxPlace b;
    b.facility = &f;
    b.x = x;
    b.y = boxes_top;
    const double caption_w = std::max(text_width(facility_title(world, f), 14), text_width(mesh_shape(world, f), 11));
    b.w = std::max(kPadLeft + grid_w + kPadRight, caption_w + 40);
    b.h = kPadTop + grid_h + kCaption;
    b.grid_x = x + kPadLeft + (b.w - kPadLeft - kPadRight - grid_w) / 2;
    b.grid_y = boxes_top + kPadTop;
    boxes.push_back(b);
    x += b.w + kBoxGap;
  }

  // Where each crossing rank's drop runs: spread apart when several lanes share a column.
  std::vector<std::vector<double>> drop_x(picture.lanes.size());
  std::map<std::pair<int, int>, std::vector<int>> lanes_in_column;  // (facility, col) -> lanes
  for (const auto &b : boxes) {
    const Facility &f = *b.facility;
    for (int r = f.first_rank; r < f.first_rank + f.size(); ++r) {
      const int lane = picture.lane_of_rank[static_cast<std::size_t>(r)];
      if (lane < 0) continue;
      auto &lanes = lanes_in_column[{f.index, (r - f.first_rank) % f.cols}];
      if (std::find(lanes.begin(), lanes.end(), lane) == lanes.end()) lanes.push_back(lane);
    }
  }
  struct Drop {
    int lane;
    double x, y_end;
  };
  std::vector<Drop> drops;
  for (const auto &b : boxes) {
    const Facility &f = *b.facility;
    for (int r = f.first_rank; r < f.first_rank + f.size(); ++r) {
      const int lane = picture.lane_of_rank[static_cast<std::size_t>(r)];
      if (lane < 0) continue;
      const int row = (r - f.first_rank) / f.cols, col = (r - f.first_rank) % f.cols;
      const auto &lanes = lanes_in_column[{f.index, col}];
      const double slot = static_cast<double>(std::find(lanes.begin(), lanes.end(), lane) - lanes.begin());
      const double spread = std::min(7.0, (kCellW - 16) / std::max<double>(1, static_cast<double>(lanes.size()) - 1));
      const double dx = (slot - (static_cast<double>(lanes.size()) - 1) / 2) * spread;
      const double xd = cell_x(b, col) + kCellW / 2 + dx;
      drops.push_back({lane, xd, cell_y(b, row)});
      drop_x[static_cast<std::size_t>(lane)].push_back(xd);
    }
  }

  // Boxes first, then drops over their background, then cells over the drops.
  for (const auto &b : boxes) {
    const Facility &f = *b.facility;
    c.svg.rect(b.x, b.y, b.w, b.h, 12,
               "class=\"facility\" data-facility=\"" + std::to_string(f.index) + "\" " +
                   fill_stroke(kBoxFill, kBoxStroke, 1.5));
    if (world.hsdp) {
      for (int row = 0; row < f.rows; ++row)
        c.svg.text(b.x + 14, cell_y(b, row) + kCellH / 2 + 4, "replica " + std::to_string(row), 10.5, fill(kFaint));
    } else {
      c.svg.text(b.x + 14, cell_y(b, 0) + kCellH / 2 + 4, "FSDP", 10.5, fill(kFaint));
    }
    const double caption_y = b.grid_y + f.rows * (kCellH + kCellGap) - kCellGap;
    c.svg.text(b.x + 14, caption_y + 24, facility_title(world, f), 14, "font-weight=\"700\" " + fill(kInk));
    c.svg.text(b.x + 14, caption_y + 42, "ranks " + rank_range(f) + " \u00b7 " + mesh_shape(world, f), 11, fill(kMuted));
    c.extend(b.x + b.w, b.y + b.h);
  }
  for (const auto &d : drops)
    c.svg.line(d.x, lanes_top + d.lane * kLaneGap, d.x, d.y_end,
               "stroke=\"" + std::string(lane_color(d.lane)) + "\" stroke-width=\"2\"");
  draw_lanes(c, picture, boxes_left, lanes_top, drop_x);
  for (const auto &b : boxes) {
    const Facility &f = *b.facility;
    if (world.hsdp)
      for (int col = 0; col < f.cols; ++col) {
        const double cx = cell_x(b, col) + kCellW / 2;
        const std::string label = "shard " + std::to_string(col);
        const double w = text_width(label, 10) + 6;
        c.svg.rect(cx - w / 2, b.grid_y - 19, w, 13, 3, fill(kBoxFill));  // the drops pass behind the label
        c.svg.text(cx, b.grid_y - 9, label, 10, fill(kFaint), "middle");
      }
    for (int r = f.first_rank; r < f.first_rank + f.size(); ++r) {
      const RankInfo &info = world.ranks[static_cast<std::size_t>(r)];
      const int row = (r - f.first_rank) / f.cols, col = (r - f.first_rank) % f.cols;
      const double cx = cell_x(b, col), cy = cell_y(b, row);
      const int lane = picture.lane_of_rank[static_cast<std::size_t>(r)];
      const bool sender = info.is_sender.value_or(false) && world.federated();
      const std::string cell_fill = lane >= 0 ? lane_tint(lane) : (world.federated() ? "#ffffff" : "#eef2f7");
      const std::string stroke = sender && lane >= 0 ? lane_color(lane) : (sender ? kInk : kCellStroke);
      c.svg.rect(cx, cy, kCellW, kCellH, 7,
                 std::string("class=\"") + (sender ? "rank sender" : "rank") + "\" data-rank=\"" + std::to_string(r) +
                     "\" " + fill_stroke(cell_fill, stroke, sender ? 3 : 1));
      c.svg.text(cx + kCellW / 2, cy + (info.receive_from ? 23 : 28), std::to_string(r), 15,
                 "font-weight=\"600\" " + fill(kInk), "middle");
      if (info.receive_from)
        c.svg.text(cx + kCellW / 2, cy + 37, "\u2190 " + std::to_string(*info.receive_from), 9.5, fill(kFaint), "middle");
      if (info.node_rank)
        c.svg.text(cx + kCellW - 4, cy + 10, "n" + std::to_string(*info.node_rank), 8.5, fill(kFaint), "end");
      if (r == picture.highlight)
        c.svg.rect(cx - 4, cy - 4, kCellW + 8, kCellH + 8, 10,
                   "fill=\"none\" stroke=\"#111827\" stroke-width=\"2\" stroke-dasharray=\"5 3\"");
    }
  }
}

// ---------------------------------------------------------------- mesh shapes (big worlds)

void draw_summary(Canvas &c, const World &world, const Picture &picture, double top) {
  const double label_w = lane_labels_width(picture);
  const double lanes_top = top + 6;
  const double boxes_top = picture.lanes.empty() ? top + 8 : lanes_top + static_cast<double>(picture.lanes.size()) * kLaneGap + 14;
  const double boxes_left = kMargin + label_w;
  const double gap_w = 170;
  double box_w = 200;  // one width for all boxes, enough for the widest caption and mini-grid
  for (int index : picture.facilities) {
    if (index < 0) continue;
    const Facility &f = world.facilities[static_cast<std::size_t>(index)];
    box_w = std::max({box_w, text_width("ranks " + rank_range(f) + " (" + std::to_string(f.size()) + ")", 11.5) + 36,
                      text_width(mesh_shape(world, f), 11.5) + 36,
                      std::min(f.cols, kSummaryGrid) * (kMiniCell + kMiniGap) + 80});
  }

  int max_rows = 1;
  for (int index : picture.facilities)
    if (index >= 0) max_rows = std::max(max_rows, std::min(world.facilities[static_cast<std::size_t>(index)].rows, kSummaryGrid));
  const double grid_top = 96;
  const double box_h = grid_top + max_rows * (kMiniCell + kMiniGap) + 52;

  std::vector<BoxPlace> boxes;
  double x = boxes_left;
  for (int index : picture.facilities) {
    BoxPlace b;
    b.facility = index >= 0 ? &world.facilities[static_cast<std::size_t>(index)] : nullptr;
    b.x = x;
    b.y = boxes_top;
    b.w = b.facility ? box_w : gap_w;
    b.h = box_h;
    boxes.push_back(b);
    x += b.w + kBoxGap;
  }

  // Each lane drops into every facility box (the facilities left out included: every facility takes
  // part in every FEDERATED group), above the column of its member when the mini-grid shows it.
  std::vector<std::vector<double>> drop_x(picture.lanes.size());
  for (const auto &b : boxes)
    for (std::size_t l = 0; l < picture.lanes.size(); ++l) {
      double xd = b.x + b.w - 40 + (static_cast<double>(l) - static_cast<double>(picture.lanes.size())) * 6;
      if (b.facility) {
        const Facility &f = *b.facility;
        const auto &members = picture.lanes[l].ranks;
        for (auto it = std::lower_bound(members.begin(), members.end(), f.first_rank);
             it != members.end() && *it < f.first_rank + f.size(); ++it) {
          const int row = (*it - f.first_rank) / f.cols, col = (*it - f.first_rank) % f.cols;
          if (row < kSummaryGrid && col < kSummaryGrid) {
            xd = b.x + 16 + col * (kMiniCell + kMiniGap) + kMiniCell / 2;
            break;
          }
        }
      } else {
        xd = b.x + b.w / 2 + (static_cast<double>(l) - (static_cast<double>(picture.lanes.size()) - 1) / 2) * 10;
      }
      drop_x[l].push_back(xd);
      c.svg.line(xd, lanes_top + static_cast<double>(l) * kLaneGap, xd, b.y,
                 "stroke=\"" + std::string(lane_color(static_cast<int>(l))) + "\" stroke-width=\"2\"" +
                     (b.facility ? "" : " stroke-dasharray=\"4 3\""));
    }
  draw_lanes(c, picture, boxes_left, lanes_top, drop_x);

  for (const auto &b : boxes) {
    c.extend(b.x + b.w, b.y + b.h);
    if (!b.facility) {
      c.svg.rect(b.x, b.y, b.w, b.h, 12,
                 "class=\"left-out\" " + fill_stroke("#ffffff", kBoxStroke, 1.5) + " stroke-dasharray=\"6 4\"");
      c.svg.text(b.x + b.w / 2, b.y + b.h / 2 - 10, "\u22ef", 28, fill(kFaint), "middle");
      c.svg.text(b.x + b.w / 2, b.y + b.h / 2 + 18,
                 plural(picture.left_out, "more facility", "more facilities"), 12, fill(kMuted), "middle");
      int low = world.facilities[3].size(), high = low;
      for (int i = 3; i < 3 + picture.left_out; ++i) {
        low = std::min(low, world.facilities[static_cast<std::size_t>(i)].size());
        high = std::max(high, world.facilities[static_cast<std::size_t>(i)].size());
      }
      const std::string sizes = low == high ? std::to_string(low) + " ranks each"
                                            : std::to_string(low) + "\u2013" + std::to_string(high) + " ranks each";
      c.svg.text(b.x + b.w / 2, b.y + b.h / 2 + 36, sizes, 11, fill(kFaint), "middle");
      continue;
    }
    const Facility &f = *b.facility;
    c.svg.rect(b.x, b.y, b.w, b.h, 12,
               "class=\"facility summary\" data-facility=\"" + std::to_string(f.index) + "\" " +
                   fill_stroke(kBoxFill, kBoxStroke, 1.5));
    c.svg.text(b.x + 16, b.y + 28, facility_title(world, f), 15, "font-weight=\"700\" " + fill(kInk));
    c.svg.text(b.x + 16, b.y + 48, "ranks " + rank_range(f) + " (" + std::to_string(f.size()) + ")", 11.5, fill(kMuted));
    c.svg.text(b.x + 16, b.y + 66, mesh_shape(world, f), 11.5, fill(kMuted));

    const int rows = std::min(f.rows, kSummaryGrid), cols = std::min(f.cols, kSummaryGrid);
    const double gx = b.x + 16, gy = b.y + grid_top - 12;
    for (int row = 0; row < rows; ++row)
      for (int col = 0; col < cols; ++col) {
        const int r = f.first_rank + row * f.cols + col;
        const RankInfo &info = world.ranks[static_cast<std::size_t>(r)];
        const int lane = picture.lane_of_rank[static_cast<std::size_t>(r)];
        const bool sender = info.is_sender.value_or(false) && world.federated();
        const double cx = gx + col * (kMiniCell + kMiniGap), cy = gy + row * (kMiniCell + kMiniGap);
        c.svg.rect(cx, cy, kMiniCell, kMiniCell, 3,
                   std::string("class=\"") + (sender ? "rank sender" : "rank") + "\" data-rank=\"" +
                       std::to_string(r) + "\" " +
                       fill_stroke(lane >= 0 ? lane_tint(lane) : "#ffffff",
                               sender && lane >= 0 ? lane_color(lane) : kCellStroke, sender ? 2 : 0.8));
        if (r == picture.highlight)
          c.svg.rect(cx - 3, cy - 3, kMiniCell + 6, kMiniCell + 6, 4,
                     "fill=\"none\" stroke=\"#111827\" stroke-width=\"1.5\" stroke-dasharray=\"3 2\"");
      }
    const double grid_right = gx + cols * (kMiniCell + kMiniGap);
    const double grid_bottom = gy + rows * (kMiniCell + kMiniGap);
    if (f.cols > cols) c.svg.text(grid_right + 4, gy + kMiniCell - 3, "\u22ef " + std::to_string(f.cols), 11, fill(kFaint));
    if (f.rows > rows) c.svg.text(gx, grid_bottom + 10, "\u22ee " + std::to_string(f.rows) + " rows", 11, fill(kFaint));

    const std::vector<int> senders = facility_senders(world, f);
    std::string role;
    if (!world.federated())
      role = "no federated scaling";
    else if (!world.hsdp)
      role = "every rank is a sender";
    else {
      role = plural(static_cast<long long>(senders.size()), "sender") + ": " + compact_ranks(senders, 200);
      if (text_width(role, 11.5) > box_w - 32)
        role = plural(static_cast<long long>(senders.size()), "sender") + ", one per shard";
    }
    c.svg.text(b.x + 16, b.y + b.h - 14, role, 11.5, fill(kMuted));
  }
}

// ---------------------------------------------------------------- legend

void draw_legend(Canvas &c, const World &world, const Picture &picture) {
  double y = c.bottom + 46;
  double x = kMargin;
  const double row_limit = std::max(c.width, 760.0);
  auto item_space = [&](double w) {
    if (x + w > row_limit && x > kMargin) {
      x = kMargin;
      y += 30;
    }
  };
  auto item = [&](const std::string &label, auto draw_swatch) {
    const double w = 34 + text_width(label, 12) + 28;
    item_space(w);
    draw_swatch(x, y);
    c.svg.text(x + 34, y + 4, label, 12, fill(kMuted));
    c.extend(x + w, y + 12);
    x += w;
  };
  c.svg.text(kMargin, y - 20, "Legend", 12, "font-weight=\"700\" " + fill(kInk));
  if (world.federated()) {
    const char *color = picture.lanes.empty() ? kInk : lane_color(0);
    const char *tint = picture.lanes.empty() ? "#ffffff" : lane_tint(0);
    item("sender: averages its shard with the other facilities", [&](double sx, double sy) {
      c.svg.rect(sx, sy - 10, 26, 20, 5, fill_stroke(tint, color, 3));
    });
    if (world.hsdp && picture.detailed)
      item("\u2190 n: receives its shard from sender n after the average", [&](double sx, double sy) {
        c.svg.rect(sx, sy - 10, 26, 20, 5, fill_stroke("#ffffff", kCellStroke, 1));
        c.svg.text(sx + 13, sy + 4, "\u2190", 10, fill(kFaint), "middle");
      });
    item("FEDERATED group: cross-facility all-reduce (colour = group)", [&](double sx, double sy) {
      c.svg.line(sx, sy, sx + 26, sy, "stroke=\"" + std::string(color) + "\" stroke-width=\"3\" stroke-linecap=\"round\"");
      c.svg.circle(sx + 13, sy, 3.5, fill(color));
    });
  }
  if (world.hsdp)
    item("rows: replicas, columns: shards", [&](double sx, double sy) {
      for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j) c.svg.rect(sx + 4 + j * 10, sy - 9 + i * 10, 8, 8, 2, fill_stroke("#ffffff", kCellStroke, 1));
    });
  if (!world.hsdp && !world.federated())
    item("FSDP: each rank holds 1/" + std::to_string(world.world_size) + " of the model", [&](double sx, double sy) {
      c.svg.rect(sx, sy - 10, 26, 20, 5, fill_stroke("#eef2f7", kCellStroke, 1));
    });
  if (world.node_size)
    item("nK: on node K", [&](double sx, double sy) {
      c.svg.text(sx + 13, sy + 4, "n0", 10, fill(kFaint), "middle");
    });
  if (picture.highlight >= 0)
    item("rank " + std::to_string(picture.highlight), [&](double sx, double sy) {
      c.svg.rect(sx, sy - 10, 26, 20, 5, "fill=\"none\" stroke=\"#111827\" stroke-width=\"2\" stroke-dasharray=\"5 3\"");
    });
  c.extend(x, y + 12);
}

}  // namespace

void write_svg(std::ostream &out, const World &world, const Options &options) {
  const Picture picture = plan_picture(world, options.rank.value_or(-1));
  Canvas c;
  const double top = draw_header(c, world, picture);
  if (picture.detailed)
    draw_detailed(c, world, picture, top);
  else
    draw_summary(c, world, picture, top);
  draw_legend(c, world, picture);
  out << c.svg.document(c.width + kMargin, c.bottom + kMargin,
                        "xffl plan: " + layout_summary(world));
}

}  // namespace xffl_topo
