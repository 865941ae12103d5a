// A list of global ranks, stored as an arithmetic progression when it is one (most groups are), or
// explicitly. Keeps a rank's plan O(G + its own group sizes) in time and O(G) in memory even when a
// group is the whole world.
#ifndef XFFL_SRC_TOPOLOGY_RANK_LIST_H
#define XFFL_SRC_TOPOLOGY_RANK_LIST_H

#include <cstddef>
#include <vector>

namespace xffl::topology {

class RankList {
 public:
  RankList() = default;
  // start, start + stride, ..., start + (count - 1) * stride
  static RankList progression(int start, int stride, int count);
  static RankList explicit_ranks(std::vector<int> ranks);

  int size() const { return explicit_ ? static_cast<int>(ranks_.size()) : count_; }
  int at(int index) const { return explicit_ ? ranks_[static_cast<std::size_t>(index)] : start_ + index * stride_; }
  // Index of rank in the list, or -1.
  int index_of(int rank) const;
  std::vector<int> to_vector() const;
  bool operator==(const RankList &other) const;

 private:
  bool explicit_ = false;
  int start_ = 0;
  int stride_ = 1;
  int count_ = 0;
  std::vector<int> ranks_;
};

}  // namespace xffl::topology

#endif
