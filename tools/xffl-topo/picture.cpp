#include "picture.h"

#include <algorithm>
#include <map>

#include "summary.h"

namespace xffl_topo {

namespace {

constexpr int kMaxDetailedRanks = 256;
constexpr int kMaxDetailedFacilities = 16;
constexpr int kMaxDetailedColumns = 64;  // all facilities side by side
constexpr int kMaxDetailedRows = 32;
constexpr std::size_t kMaxLanes = 8;

// A colour-blind-safe palette (Okabe-Ito, darkened for lines) with matching light tints.
const char *const kColors[] = {"#d55e00", "#0072b2", "#009e73", "#cc79a7", "#b8860b", "#56b4e9", "#7b52ab", "#5f6b00"};
const char *const kTints[] = {"#fbe3d2", "#d6e9f8", "#d3f1e6", "#f6e2ee", "#f6ebc8", "#e1f1fb", "#e8def3", "#ecefcc"};

std::string why_summary(const World &world) {
  int columns = 0, rows = 0;
  for (const auto &f : world.facilities) {
    columns += f.cols;
    rows = std::max(rows, f.rows);
  }
  if (world.world_size > kMaxDetailedRanks)
    return std::to_string(world.world_size) + " ranks (more than " + std::to_string(kMaxDetailedRanks) + ")";
  if (static_cast<int>(world.facilities.size()) > kMaxDetailedFacilities)
    return std::to_string(world.facilities.size()) + " facilities (more than " +
           std::to_string(kMaxDetailedFacilities) + ")";
  if (columns > kMaxDetailedColumns)
    return std::to_string(columns) + " mesh columns side by side (more than " + std::to_string(kMaxDetailedColumns) + ")";
  if (rows > kMaxDetailedRows)
    return std::to_string(rows) + " replicas in one mesh (more than " + std::to_string(kMaxDetailedRows) + ")";
  return "";
}

// Few crossing groups: one lane each. Many: one lane per shard (HSDP column, or FSDP position),
// and if even those are many, one lane for all.
void assign_lanes(const World &world, Picture &picture) {
  picture.lane_of_rank.assign(static_cast<std::size_t>(world.world_size), -1);
  const auto groups = world.crossing_groups();
  if (groups.empty()) return;
  auto add = [&](std::size_t lane, const std::vector<int> &members) {
    for (int r : members) picture.lane_of_rank[static_cast<std::size_t>(r)] = static_cast<int>(lane);
    auto &ranks = picture.lanes[lane].ranks;
    ranks.insert(ranks.end(), members.begin(), members.end());
  };
  if (groups.size() <= kMaxLanes) {
    for (std::size_t i = 0; i < groups.size(); ++i) {
      const auto &group = *groups[i];
      std::string label = "FEDERATED " + compact_ranks(group, 28);
      if (group.size() > 4) {  // name it by its shard and size rather than by a long rank list
        const RankInfo &first = world.ranks[static_cast<std::size_t>(group.front())];
        label = std::string("FEDERATED, ") + (world.hsdp ? "shard " : "position ") +
                std::to_string(first.replica_local_rank.value_or(first.federated_local_rank.value_or(0))) + ": " +
                plural(static_cast<long long>(group.size()), "rank");
      }
      picture.lanes.push_back({label, {}});
      add(i, group);
    }
  } else {
    std::map<int, std::vector<const std::vector<int> *>> by_shard;
    for (const auto *group : groups) {
      const RankInfo &first = world.ranks[static_cast<std::size_t>(group->front())];
      by_shard[first.replica_local_rank.value_or(first.federated_local_rank.value_or(0))].push_back(group);
    }
    const char *what = world.hsdp ? "shard " : "position ";
    if (by_shard.size() <= kMaxLanes) {
      for (const auto &[shard, members] : by_shard) {
        picture.lanes.push_back(
            {what + std::to_string(shard) + ": " + plural(static_cast<long long>(members.size()), "FEDERATED group"), {}});
        for (const auto *group : members) add(picture.lanes.size() - 1, *group);
      }
    } else {
      picture.lanes.push_back({plural(static_cast<long long>(groups.size()), "FEDERATED group"), {}});
      for (const auto *group : groups) add(0, *group);
    }
  }
  for (auto &lane : picture.lanes) std::sort(lane.ranks.begin(), lane.ranks.end());
}

}  // namespace

const char *lane_color(int lane) { return kColors[static_cast<std::size_t>(lane) % (sizeof kColors / sizeof *kColors)]; }
const char *lane_tint(int lane) { return kTints[static_cast<std::size_t>(lane) % (sizeof kTints / sizeof *kTints)]; }

Picture plan_picture(const World &world, int highlight) {
  Picture picture;
  picture.highlight = highlight;
  picture.why_summary = why_summary(world);
  picture.detailed = picture.why_summary.empty();
  const int n = static_cast<int>(world.facilities.size());
  if (picture.detailed || n <= 6) {
    for (int f = 0; f < n; ++f) picture.facilities.push_back(f);
  } else {
    picture.facilities = {0, 1, 2, -1, n - 2, n - 1};
    picture.left_out = n - 5;
  }
  assign_lanes(world, picture);
  return picture;
}

}  // namespace xffl_topo
