#include "summary.h"

#include <algorithm>

namespace xffl_topo {

namespace {

// Consecutive runs as "a-b" (three or more), shorter ones as single ranks.
std::string runs(const std::vector<int> &ranks) {
  std::string out;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!out.empty()) out += ",";
    if (j - i >= 2) {
      out += std::to_string(ranks[i]) + "-" + std::to_string(ranks[j]);
    } else {
      out += std::to_string(ranks[i]);
      for (std::size_t k = i + 1; k <= j; ++k) out += "," + std::to_string(ranks[k]);
    }
    i = j + 1;
  }
  return out;
}

bool is_progression(const std::vector<int> &ranks) {
  if (ranks.size() < 3) return false;
  const long long step = static_cast<long long>(ranks[1]) - ranks[0];
  for (std::size_t i = 2; i < ranks.size(); ++i)
    if (static_cast<long long>(ranks[i]) - ranks[i - 1] != step) return false;
  return step > 1;
}

}  // namespace

std::string plural(long long count, const char *noun, const char *nouns) {
  if (count == 1) return "1 " + std::string(noun);
  return std::to_string(count) + " " + (nouns ? std::string(nouns) : std::string(noun) + "s");
}

std::string compact_ranks(const std::vector<int> &ranks, std::size_t max_chars) {
  if (ranks.empty()) return "-";
  if (is_progression(ranks) && ranks.size() > 6)
    return std::to_string(ranks[0]) + "," + std::to_string(ranks[1]) + ",..," + std::to_string(ranks.back());
  std::string text = runs(ranks);
  if (text.size() <= max_chars) return text;
  // Too long: the first ranks that fit, the last one, and how many there are.
  const std::string tail = ",..," + std::to_string(ranks.back()) + " (" + std::to_string(ranks.size()) + " ranks)";
  const std::size_t room = max_chars > tail.size() ? max_chars - tail.size() : 0;
  auto cut = text.rfind(',', room);
  if (cut == std::string::npos) cut = text.find(',');
  return text.substr(0, cut) + tail;
}

std::string size_list(const std::vector<int> &sizes) {
  std::string out;
  if (sizes.size() <= 8) {
    for (std::size_t i = 0; i < sizes.size(); ++i) out += (i ? "," : "") + std::to_string(sizes[i]);
    return out;
  }
  for (std::size_t i = 0; i < 3; ++i) out += std::to_string(sizes[i]) + ",";
  return out + "..," + std::to_string(sizes.back());
}

std::string layout_summary(const World &world) {
  std::string out = "world " + std::to_string(world.world_size) + ": ";
  if (world.federated()) {
    out += plural(static_cast<long long>(world.federated_sizes.size()), "facility", "facilities");
    out += " (federated " + size_list(world.federated_sizes) + ")";
    if (world.hsdp)
      out += ", HSDP " + std::to_string(*world.hsdp) + " inside each: " + size_list(world.replica_world_size) +
             " replicas of " + plural(*world.hsdp, "shard");
    else
      out += ", FSDP inside each";
  } else if (world.hsdp) {
    const int replicas = world.world_size / *world.hsdp;
    out += "HSDP, " + plural(replicas, "replica") + " x " + plural(*world.hsdp, "shard");
  } else {
    out += "FSDP over all " + plural(world.world_size, "rank");
  }
  if (world.node_size && *world.node_size > 0)
    out += "; " + std::to_string(*world.node_size) + " ranks per node (" +
           plural(world.world_size / *world.node_size, "node") + ")";
  if (world.streams > 1) out += "; " + std::to_string(world.streams) + " streams";
  return out;
}

std::vector<int> facility_senders(const World &world, const Facility &facility) {
  std::vector<int> senders;
  for (int r = facility.first_rank; r < facility.first_rank + facility.size(); ++r)
    if (world.ranks[static_cast<std::size_t>(r)].is_sender.value_or(false)) senders.push_back(r);
  return senders;
}

std::string facility_summary(const World &world, const Facility &facility) {
  std::string out = world.federated() ? "facility " + std::to_string(facility.index) : std::string("mesh");
  const int last = facility.first_rank + facility.size() - 1;
  out += ": ranks " + std::to_string(facility.first_rank) + "-" + std::to_string(last) + ", ";
  if (world.hsdp)
    out += plural(facility.rows, "replica") + " x " + plural(facility.cols, "shard");
  else
    out += "FSDP over " + plural(facility.cols, "rank");
  if (world.federated() && world.hsdp) out += ", senders " + compact_ranks(facility_senders(world, facility));
  return out;
}

std::string crossing_summary(const World &world) {
  if (!world.federated()) return "no federated scaling: no rank crosses facilities";
  const auto groups = world.crossing_groups();
  const auto ranks = world.crossing_ranks();
  if (groups.empty()) return "one facility: no rank crosses facilities";
  std::string out;
  std::string listed = compact_ranks(ranks, 60);
  if (ranks.size() <= 8) {  // a handful of ranks reads better spelled out: "0,1,2,5", not "0-2,5"
    listed.clear();
    for (int r : ranks) listed += (listed.empty() ? "" : ",") + std::to_string(r);
  }
  if (static_cast<int>(ranks.size()) == world.world_size)
    out = "every rank crosses facilities";
  else if (listed.find("..") == std::string::npos)
    out = "ranks " + listed + " cross facilities";
  else
    out = std::to_string(ranks.size()) + " ranks cross facilities";
  out += " (" + std::to_string(ranks.size()) + " of " + std::to_string(world.world_size) + ") in " +
         plural(static_cast<long long>(groups.size()), "FEDERATED group");
  // The groups themselves while they stay short.
  std::string shown;
  for (std::size_t i = 0; i < groups.size() && i < 8; ++i) shown += " [" + compact_ranks(*groups[i], 24) + "]";
  if (groups.size() > 8) shown += " ..";
  if (shown.size() <= 80) out += ":" + shown;
  return out;
}

}  // namespace xffl_topo
