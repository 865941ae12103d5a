// The rendezvous store opened where the launcher offers PMIx instead of a MASTER_ADDR: Open MPI's
// mpirun and srun --mpi=pmix (launch_env.h decides when; explicit MASTER_ADDR always wins).
//
// Rank 0 starts the store's server first, on MASTER_PORT or a port the kernel chooses (StoreConfig's
// master_port 0), at 127.0.0.1 when PMIx says every rank of the job runs on this host, else at the
// host's name. It then publishes "host:port" with PMIx_Put and PMIx_Commit, and every rank meets it in
// one PMIx_Fence that collects the data; the other ranks read the address with PMIx_Get and connect
// as they would to a MASTER_ADDR. When rank 0 cannot start the server it publishes the reason instead,
// so the others fail at once with it rather than at their timeout.
//
// PMIx is loaded lazily (pmix_api.h), initialized for the exchange only and finalized after it
// (PMIx_Init and PMIx_Finalize nest, so an MPI program's own PMIx session is left as it was). Every
// PMIx wait is bounded by the store's timeout (XFFL_TIMEOUT): the fence and the read carry PMIX_TIMEOUT.
//
// Errors are xffl::Error naming the rank and what was awaited:
//   XFFL_ETIMEOUT      the fence or the read expired ("rank 2: timed out after 5000 ms in PMIx_Fence
//                      over the 4 ranks of PMIx namespace '1234', waiting for rank 0 to publish the
//                      store's address")
//   XFFL_EINVAL        PMIx numbers this process or the job differently from the launcher's variables
//                      (XFFL_RANK or XFFL_WORLD_SIZE changed them): PMIx cannot name rank 0 then
//   XFFL_EUNSUPPORTED  PMIx cannot be loaded, or this build has no PMIx headers
//   XFFL_EBACKEND      PMIx refused (its words), or rank 0 could not start the store (its message)
//   and every error of the Store itself.
#ifndef XFFL_SRC_BOOTSTRAP_PMIX_STORE_H
#define XFFL_SRC_BOOTSTRAP_PMIX_STORE_H

#include <memory>

#include "bootstrap/store.h"

namespace xffl::bootstrap {

// Collective over the PMIx job: every rank calls it once per store, in the same order. `config` is a
// complete StoreConfig except master_addr, which PMIx supplies (master_port: 0 or the port rank 0
// serves on).
std::unique_ptr<Store> open_store_through_pmix(StoreConfig config);

}  // namespace xffl::bootstrap

#endif
