// The defaults of Backend's capabilities that refuse: a host-memory backend has no device.
#include "comm/communicator.h"

#include "common/error.h"

namespace xffl::comm {

DeviceChoice Backend::select_device(int device_index, int node_local_rank, int streams) {
  (void)device_index;
  (void)node_local_rank;
  (void)streams;
  fail(XFFL_EUNSUPPORTED, "cuda execution needs the NCCL backend");
}

void *Backend::stream(int index) {
  (void)index;
  fail(XFFL_EUNSUPPORTED, "streams exist only for cuda execution (backend nccl)");
}

void Backend::set_crossing_backend(std::shared_ptr<Backend> host) {
  (void)host;
  fail(XFFL_EINTERNAL, "backend ", static_cast<int>(kind()), " takes no crossing backend");
}

}  // namespace xffl::comm
