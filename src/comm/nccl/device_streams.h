// The execution device and its pool of K streams (xffl_set_exec_device). Stream k serves the k-th
// instance of the FEDERATED and REPLICA groups when a collective is called with a NULL stream.
#ifndef XFFL_SRC_COMM_NCCL_DEVICE_STREAMS_H
#define XFFL_SRC_COMM_NCCL_DEVICE_STREAMS_H

#include <memory>
#include <vector>

#include "comm/nccl/nccl_api.h"

namespace xffl::comm::nccl {

// Devices CUDA sees. No driver, a stub driver or no device: XFFL_EUNSUPPORTED with CUDA's words;
// another CUDA failure: XFFL_EBACKEND; zero devices: XFFL_EUNSUPPORTED.
int cuda_device_count(NcclApi &api);

// requested >= 0: that device (XFFL_EINVAL outside [0, count)); -1: node_local_rank modulo count.
int choose_device(int requested, int node_local_rank, int count);

class DeviceStreams {
 public:
  // Makes `device` current and creates `streams` non-blocking streams on it.
  DeviceStreams(std::shared_ptr<NcclApi> api, int device, int streams);
  ~DeviceStreams();
  DeviceStreams(const DeviceStreams &) = delete;
  DeviceStreams &operator=(const DeviceStreams &) = delete;

  int device() const { return device_; }
  int size() const { return static_cast<int>(streams_.size()); }
  // Stream index modulo the pool size: instance k of a group always gets the same stream.
  Stream at(int index) const;
  // Adds streams up to `streams` (existing ones stay: collectives may be running on them).
  void grow(int streams);
  // Makes the device current for the calling thread (NCCL creates communicators on the current one).
  void make_current() const;

 private:
  std::shared_ptr<NcclApi> api_;
  int device_;
  std::vector<Stream> streams_;
};

// For the duration of one call into the library: the device current on entry is saved, `device`
// made current, and the saved one restored on exit (as NCCL does around its own calls), so the
// caller's thread keeps its current device whatever the library does. A null `streams` (no device
// chosen yet) changes nothing.
class DeviceScope {
 public:
  DeviceScope(NcclApi &api, const DeviceStreams *streams);
  ~DeviceScope();
  DeviceScope(const DeviceScope &) = delete;
  DeviceScope &operator=(const DeviceScope &) = delete;

 private:
  NcclApi &api_;
  int saved_ = -1;  // -1: nothing to restore
};

}  // namespace xffl::comm::nccl

#endif
