// What an NcclBackend shares with the communicators it made (they may outlive it: groups own them).
#ifndef XFFL_SRC_COMM_NCCL_NCCL_CONTEXT_H
#define XFFL_SRC_COMM_NCCL_NCCL_CONTEXT_H

#include <memory>

#include "comm/nccl/device_streams.h"
#include "comm/nccl/nccl_api.h"

namespace xffl::comm::nccl {

struct NcclContext {
  std::shared_ptr<NcclApi> api;
  int rank = 0;
  int world_size = 1;
  int timeout_ms = 300000;
  // false: a collective returns once its work on the stream is done (every wait bounded, errors
  // reported by the call that caused them). true: it returns once enqueued, as NCCL does; errors of
  // peers then surface at the next call on the communicator, or at the next barrier.
  bool stream_ordered = false;
  std::unique_ptr<DeviceStreams> device;  // null until chosen
};

}  // namespace xffl::comm::nccl

#endif
