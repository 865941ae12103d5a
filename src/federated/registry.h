// The federated strategies a state picks from by XFFL_OPT_FEDERATED_STRATEGY: the built-in ones
// (registry.cpp, one line each) and any that code inside the process adds to its state's table (the
// tests' strategies). Each state owns its table: nothing global changes.
//
// A new built-in strategy: its file in src/federated/ (a Strategy and a function that returns it),
// its declaration and table row in registry.cpp, its line in src/CMakeLists.txt, and its enumerator
// in include/xffl/types.h (public API: the bindings and the ABI baseline follow).
#ifndef XFFL_SRC_FEDERATED_REGISTRY_H
#define XFFL_SRC_FEDERATED_REGISTRY_H

#include <string>
#include <vector>

#include "federated/strategy.h"

namespace xffl::federated {

class StrategyTable {
 public:
  StrategyTable();  // the built-in strategies

  // The strategy of an option value, or nullptr.
  const Strategy *find(int value) const;
  // XFFL_EINVAL naming the value and every strategy of the table when `value` names none:
  // "federated strategy 7 is not XFFL_FEDAVG_HIERARCHICAL (0) or XFFL_FEDAVG_FLAT (1)".
  void require(int value) const;
  // The strategy of a value that require() accepted (XFFL_EINTERNAL otherwise).
  const Strategy &get(int value) const;
  // A strategy under a value no other has (XFFL_EINVAL otherwise); `strategy` must outlive the table.
  void add(int value, std::string name, const Strategy &strategy);

 private:
  struct Entry {
    int value;
    std::string name;  // the enumerator's name, for messages
    const Strategy *strategy;
  };
  std::vector<Entry> entries_;
};

}  // namespace xffl::federated

#endif
