#include "federated/registry.h"

#include <utility>

#include "common/error.h"

namespace xffl::federated {

// The built-in strategies, one file each.
const Strategy &hierarchical_strategy();  // hierarchical.cpp
const Strategy &flat_strategy();          // flat.cpp

StrategyTable::StrategyTable()
    : entries_{
          {XFFL_FEDAVG_HIERARCHICAL, "XFFL_FEDAVG_HIERARCHICAL", &hierarchical_strategy()},
          {XFFL_FEDAVG_FLAT, "XFFL_FEDAVG_FLAT", &flat_strategy()},
      } {}

const Strategy *StrategyTable::find(int value) const {
  for (const Entry &entry : entries_)
    if (entry.value == value) return entry.strategy;
  return nullptr;
}

void StrategyTable::require(int value) const {
  if (find(value)) return;
  std::string choices;
  for (size_t i = 0; i < entries_.size(); ++i) {
    if (i > 0) choices += i + 1 == entries_.size() ? " or " : ", ";
    choices += entries_[i].name + " (" + std::to_string(entries_[i].value) + ")";
  }
  fail(XFFL_EINVAL, "federated strategy ", value, " is not ", choices);
}

const Strategy &StrategyTable::get(int value) const {
  if (const Strategy *strategy = find(value)) return *strategy;
  fail(XFFL_EINTERNAL, "no federated strategy ", value, " in the state's table");
}

void StrategyTable::add(int value, std::string name, const Strategy &strategy) {
  for (const Entry &entry : entries_)
    if (entry.value == value)
      fail(XFFL_EINVAL, "federated strategy ", value, " is taken by ", entry.name, "; ", name, " needs another value");
  entries_.push_back({value, std::move(name), &strategy});
}

}  // namespace xffl::federated
