// Brings up the backend chosen in xffl_set_global from its line in the table of backends
// (comm/backend_table.h): the rendezvous through the store when its maker needs one, the backend, the
// crossing backend (XFFL_OPT_CROSS_FACILITY_BACKEND) when it takes one. Everything else the state asks
// of a backend goes through comm::Backend's virtual methods.
#ifndef XFFL_SRC_STATE_BACKEND_FACTORY_H
#define XFFL_SRC_STATE_BACKEND_FACTORY_H

#include <memory>
#include <string>

#include "comm/backend_table.h"
#include "comm/communicator.h"
#include "state/facility_link.h"
#include "state/options.h"

namespace xffl {

struct GlobalConfig {
  xffl_backend_t backend = XFFL_BACKEND_NONE;
  std::string master_addr;
  int master_port = 0;
  int rank = 0;
  int world_size = 1;
  bool store_address_from_pmix = false;  // master_addr is empty: PMIx supplies it (bootstrap/pmix_store.h)
};

// The table's line of `kind`: XFFL_EINVAL naming the known kinds when no line names it.
const comm::BackendEntry &backend_entry(int kind);

// Collective when the backend (or its crossing backend) needs the rendezvous: rank 0 serves the store,
// then the backends' own bring-up; a bring-up barrier for the makers that ask for one (UCX), so that
// set_global returns on a rank only once every rank has published its address. XFFL_EUNSUPPORTED,
// before any rendezvous, when this build lacks the backend.
//
// Facility mode (facility != null; config's rank and world size are the job's): the main backend spans
// the job, the crossing backend is wan (the default; ucx is XFFL_EINVAL: it cannot reach another job)
// with global ranks and the federation's store as its rendezvous, job rank 0 registers with the
// federation once it serves the job's store, and the result is a FacilityBackend (facility_backend.h).
std::shared_ptr<comm::Backend> make_backend(const GlobalConfig &config, const Options &options,
                                            const std::shared_ptr<FacilityLink> &facility = nullptr);

// The options a live backend takes (comm::Backend::apply).
comm::LiveSettings live_settings(const Options &options);

}  // namespace xffl

#endif
