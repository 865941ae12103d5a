// Brings up the backend chosen in xffl_set_global: none (local only), or UCX over the rendezvous store.
#ifndef XFFL_SRC_STATE_BACKEND_FACTORY_H
#define XFFL_SRC_STATE_BACKEND_FACTORY_H

#include <memory>
#include <string>

#include "comm/communicator.h"
#include "state/options.h"

namespace xffl {

struct GlobalConfig {
  xffl_backend_t backend = XFFL_BACKEND_NONE;
  std::string master_addr;
  int master_port = 0;
  int rank = 0;
  int world_size = 1;
};

// Collective for UCX: rendezvous through the store (rank 0 serves it), UCX bring-up, and a bring-up
// barrier so that set_global returns on a rank only once every rank has published its address.
std::shared_ptr<comm::Backend> make_backend(const GlobalConfig &config, const Options &options);

// Applies changed options (timeout, log level) to a live backend.
void apply_options(comm::Backend &backend, const Options &options);

}  // namespace xffl

#endif
