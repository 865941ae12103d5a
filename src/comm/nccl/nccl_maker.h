// The NCCL backend's maker for the factory (backend_table.cpp); only in builds with XFFL_HAVE_NCCL,
// since it reaches the real NCCL (nccl_api_cuda.cpp). The backend's logic stays buildable without.
#ifndef XFFL_SRC_COMM_NCCL_NCCL_MAKER_H
#define XFFL_SRC_COMM_NCCL_NCCL_MAKER_H

#include "comm/backend_table.h"

namespace xffl::comm {

// Collective: the world's NCCL id goes through the job's store; a crossing backend may follow.
extern const BackendMaker kNcclMaker;

}  // namespace xffl::comm

#endif
