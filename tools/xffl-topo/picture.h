// What the dot and svg pictures show, decided once for both: every rank (small worlds) or each
// facility's mesh shape (big worlds), which facilities appear, and the "lanes" that carry the
// cross-facility FEDERATED groups (one lane per group when there are few, else one per shard).
#ifndef XFFL_TOOLS_TOPO_PICTURE_H
#define XFFL_TOOLS_TOPO_PICTURE_H

#include <string>
#include <vector>

#include "world.h"

namespace xffl_topo {

struct Lane {
  std::string label;       // "FEDERATED 0,4" or "shard 1: 12 FEDERATED groups"
  std::vector<int> ranks;  // members of the lane's groups, ascending
};

struct Picture {
  bool detailed = true;     // every rank drawn; otherwise each facility's mesh shape
  std::string why_summary;  // said in the picture when !detailed
  std::vector<int> facilities;  // indices into World::facilities; -1 stands for the ones left out
  int left_out = 0;             // facilities hidden behind the -1 entry
  std::vector<Lane> lanes;
  std::vector<int> lane_of_rank;  // -1: the rank crosses no facility
  int highlight = -1;             // --rank, or -1
};

Picture plan_picture(const World &world, int highlight);

// Lane colours: strong (edges, sender borders) and a light tint of the same hue (cell fill).
const char *lane_color(int lane);
const char *lane_tint(int lane);

// The mini-grid of a summarized facility shows at most this many rows and columns.
constexpr int kSummaryGrid = 8;

}  // namespace xffl_topo

#endif
