#include "comm/nccl/nccl_maker.h"

#include "comm/nccl/nccl_api.h"
#include "comm/nccl/nccl_backend.h"
#include "common/error.h"

namespace xffl::comm {

namespace {

std::shared_ptr<Backend> make_nccl(const BackendSetup &setup) {
  if (!setup.exchange) fail(XFFL_EINTERNAL, "NCCL backend: made without the job's store");
  return std::make_shared<NcclBackend>(nccl::real_nccl_api(), setup.exchange, setup.rank, setup.world_size,
                                       setup.timeout_ms);
}

}  // namespace

const BackendMaker kNcclMaker{/*load=*/nullptr, /*rendezvous=*/true, /*barrier=*/false, /*takes_crossing=*/true,
                              &make_nccl};

}  // namespace xffl::comm
