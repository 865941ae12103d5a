// Brings up the backend chosen in xffl_set_global (none, UCX over the rendezvous store, or NCCL with its
// ids passed through the store) and reaches the backend-specific parts the state needs: the world group
// and layout families of NCCL, the CUDA device and its streams.
#ifndef XFFL_SRC_STATE_BACKEND_FACTORY_H
#define XFFL_SRC_STATE_BACKEND_FACTORY_H

#include <memory>
#include <string>
#include <utility>

#include "comm/communicator.h"
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

// Collective for UCX and NCCL: rendezvous through the store (rank 0 serves it), then the backend's own
// bring-up; for UCX a bring-up barrier, so that set_global returns on a rank only once every rank has
// published its address.
std::shared_ptr<comm::Backend> make_backend(const GlobalConfig &config, const Options &options);

// Applies changed options (timeout, log level) to a live backend.
void apply_options(comm::Backend &backend, const Options &options);

// Local: tells the backend which group is the world (NCCL keeps its world communicator for it).
void register_world_group(comm::Backend &backend, const comm::GroupSpec &world);

// Collective over the world for backends that make communicators eagerly (NCCL: one split per rank per
// family). Returns true when the group's communicator must be made now, in layout order.
bool prepare_family_group(comm::Backend &backend, const comm::GroupSpec &group, int instance);

// Local: tells the backend where this rank sits on its node (NCCL picks the default device from it,
// and refuses a node with more ranks than devices). Nothing for other backends.
void note_node_place(comm::Backend &backend, int node_local_rank, int node_local_size);

// CUDA execution: chooses the device (-1: node_local_rank modulo the count) and the K-stream pool.
// Returns {device, device count}. XFFL_EUNSUPPORTED without the NCCL backend.
std::pair<int, int> select_cuda_device(comm::Backend &backend, int device_index, int node_local_rank, int streams);

// The pool's stream `index` (a cudaStream_t). XFFL_EUNSUPPORTED without the NCCL backend.
void *exec_stream(comm::Backend &backend, int index);

}  // namespace xffl

#endif
