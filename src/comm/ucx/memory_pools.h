// Memory a worker keeps from one collective to the next: the algorithms' scratch
// (algorithms/scratch.h) and the copies of large sends to peers on this host (send_staging.h).
// UcxWorker owns it and frees it after its UCX worker is destroyed: a send given up on may be read
// by UCX from a staged copy until then. Header-only: it has no logic of its own.
#ifndef XFFL_SRC_COMM_UCX_MEMORY_POOLS_H
#define XFFL_SRC_COMM_UCX_MEMORY_POOLS_H

#include "comm/algorithms/scratch.h"
#include "comm/ucx/send_staging.h"

namespace xffl::comm::ucx {

struct MemoryPools {
  algorithms::ScratchStack scratch;
  SendStaging send_staging;
};

}  // namespace xffl::comm::ucx

#endif
