// Short human descriptions shared by the text table and the pictures: compact rank lists and one-line
// summaries of the layout, a facility and the cross-facility traffic.
#ifndef XFFL_TOOLS_TOPO_SUMMARY_H
#define XFFL_TOOLS_TOPO_SUMMARY_H

#include <string>
#include <vector>

#include "world.h"

namespace xffl_topo {

// "0-3", "0,2", "4,6,8,10", "0,2,..,30", "0-3,8-11"; lists longer than max_chars end in "..(N ranks)".
std::string compact_ranks(const std::vector<int> &ranks, std::size_t max_chars = 48);

// "2,6" or "64,64,64,..,128" (first three and the last).
std::string size_list(const std::vector<int> &sizes);

// "world 12: 2 facilities (federated 4,8) with HSDP 2: 2,4 replicas of 2 shards".
std::string layout_summary(const World &world);

// "facility 1: ranks 4-11, 4 replicas x 2 shards, senders 4,7".
std::string facility_summary(const World &world, const Facility &facility);

// The senders (is_sender) of a facility, ascending.
std::vector<int> facility_senders(const World &world, const Facility &facility);

// "ranks 0,3,4,7 cross facilities (4 of 12) in 2 FEDERATED groups: [0,4] [3,7]", or why none do.
std::string crossing_summary(const World &world);

// "1 replica" / "3 replicas"; nouns is the irregular plural ("facilities") when there is one.
std::string plural(long long count, const char *noun, const char *nouns = nullptr);

}  // namespace xffl_topo

#endif
