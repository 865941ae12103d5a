#include "topology/rank_list.h"

#include <utility>

namespace xffl::topology {

RankList RankList::progression(int start, int stride, int count) {
  RankList list;
  list.start_ = start;
  list.stride_ = stride;
  list.count_ = count;
  return list;
}

RankList RankList::explicit_ranks(std::vector<int> ranks) {
  RankList list;
  list.explicit_ = true;
  list.ranks_ = std::move(ranks);
  return list;
}

int RankList::index_of(int rank) const {
  if (explicit_) {
    for (std::size_t i = 0; i < ranks_.size(); ++i)
      if (ranks_[i] == rank) return static_cast<int>(i);
    return -1;
  }
  if (count_ == 0) return -1;
  long long offset = static_cast<long long>(rank) - start_;
  if (stride_ == 0) return offset == 0 ? 0 : -1;
  if (offset % stride_ != 0) return -1;
  long long index = offset / stride_;
  return (index >= 0 && index < count_) ? static_cast<int>(index) : -1;
}

std::vector<int> RankList::to_vector() const {
  if (explicit_) return ranks_;
  std::vector<int> out(static_cast<std::size_t>(count_));
  for (int i = 0; i < count_; ++i) out[static_cast<std::size_t>(i)] = start_ + i * stride_;
  return out;
}

bool RankList::operator==(const RankList &other) const {
  if (size() != other.size()) return false;
  for (int i = 0; i < size(); ++i)
    if (at(i) != other.at(i)) return false;
  return true;
}

}  // namespace xffl::topology
