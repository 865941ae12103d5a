// JSON: exactly what each rank's xffl_state_describe(XFFL_FORMAT_JSON) says, so the keys and values are
// the library's (DistributedState field names, null for None). States are planned one at a time.
#include "formats.h"
#include "planner.h"

namespace xffl_topo {

void write_json(std::ostream &out, const Options &options) {
  if (options.rank) {
    out << describe(plan_rank(options, *options.rank).get(), XFFL_FORMAT_JSON) << "\n";
    return;
  }
  out << "[";
  for (int r = 0; r < options.world; ++r)
    out << (r ? ",\n  " : "\n  ") << describe(plan_rank(options, r).get(), XFFL_FORMAT_JSON);
  out << "\n]\n";
}

}  // namespace xffl_topo
