// One operation on one group at one size: how big the buffers are (nccl-tests' conventions), how to
// run it once through the public C API, how to prepare the inputs and how many output elements are
// wrong afterwards.
#ifndef XFFL_TOOLS_XFFL_BENCH_COLLECTIVE_CASE_H
#define XFFL_TOOLS_XFFL_BENCH_COLLECTIVE_CASE_H

#include <cstddef>
#include <vector>

#include <xffl.h>

#include "options.h"

namespace xffl_bench {

// Who this rank is in the benchmarked group (or, for federated_average, in the federation layout).
struct Participant {
  xffl_state_t *state = nullptr;
  xffl_group_t *group = nullptr;  // borrowed from the state; for federated_average the FEDERATED group
  std::vector<int> members;       // global ranks of the group, in group order
  int group_rank = 0;
  int global_rank = 0;
  int peers = 1;                  // n of the busbw factor: group size, or federated groups for federated_average
  int federated_rank = 0;         // federated_average only
  int replica_local_rank = 0;     // federated_average only
};

struct Layout {
  size_t bytes = 0;        // the size column: the whole result (allgather) or input (reduce_scatter)
  size_t count = 0;        // bytes / element size, as nccl-tests prints it
  size_t send_count = 0;   // elements of this rank's send buffer
  size_t recv_count = 0;   // elements of this rank's receive buffer
};

// Rounds `bytes` down to what the operation can split evenly over the group.
Layout layout_for(Operation op, xffl_dtype_t dtype, size_t bytes, int group_size);

double busbw_factor(Operation op, int peers);

// Whether the operation combines values (and so has a meaningful redop column).
bool reduces(Operation op);

class CollectiveCase {
 public:
  CollectiveCase(const Options &opts, const Participant &who, const Layout &layout, void *send, void *recv);
  // Inputs as --check expects them; also touches every page before timing.
  void prepare() const;
  xffl_status_t run_once() const;
  // Output elements that differ from the expected result (call right after prepare + run_once).
  size_t count_wrong() const;

 private:
  const Options &opts_;
  const Participant &who_;
  Layout layout_;
  void *send_;
  void *recv_;
};

}  // namespace xffl_bench

#endif
