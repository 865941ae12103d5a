// XFFL_BACKEND_NCCL: CUDA memory over NCCL (DESIGN.md section 4).
//
// Bring-up (the constructor, collective): CUDA must see a device (else XFFL_EUNSUPPORTED or
// XFFL_EBACKEND with CUDA's words); rank 0 makes the world's NCCL id and publishes it under
// "nccl/world/id", the others fetch it. The world communicator itself is made at its first need
// (the first layout, or the world group's first collective), once the device is chosen, so
// select_device may follow set_global as xffl_set_exec_device does.
//
// Groups:
//   - WORLD (register_world): the world communicator.
//   - a layout's group families (prepare_family, collective over the world, in the same order on
//     every rank): one ncclCommSplit per rank per family, with sharing; see family_plan.h.
//   - with a crossing backend (set_crossing_backend), groups that cross facilities with more than one
//     member run on it through host staging (host_staged_communicator.h): their families are never
//     split, every rank skipping them alike.
//   - xffl_create_process_group's groups (any other GroupSpec reaching create_communicator): member
//     index 0 makes an id and publishes it under "nccl/group/<tag>", the members fetch it and init
//     a communicator of their own (only members take part; never shared, since members may destroy
//     such groups in any order).
// Every creation is nonblocking and watched (watchdog.h). Not thread-safe: one thread drives a
// backend and its communicators.
#ifndef XFFL_SRC_COMM_NCCL_NCCL_BACKEND_H
#define XFFL_SRC_COMM_NCCL_NCCL_BACKEND_H

#include <deque>
#include <map>
#include <memory>
#include <vector>

#include "comm/communicator.h"
#include "comm/exchange.h"
#include "comm/nccl/nccl_context.h"
#include "comm/nccl/watchdog.h"

namespace xffl::comm {
using nccl::NcclContext;

class NcclBackend final : public Backend {
 public:
  // Throws xffl::Error: XFFL_EINVAL for a bad rank/size/timeout; XFFL_EUNSUPPORTED / XFFL_EBACKEND
  // when CUDA has no usable device; XFFL_EBACKEND when NCCL refuses; what the Exchange throws.
  NcclBackend(std::shared_ptr<nccl::NcclApi> api, std::shared_ptr<Exchange> exchange, int rank, int world_size,
              int timeout_ms);
  ~NcclBackend() override;

  xffl_backend_t kind() const override { return XFFL_BACKEND_NCCL; }
  std::unique_ptr<Communicator> create_communicator(const GroupSpec &group) override;
  GroupIdentity claim_group(const std::vector<int> &sorted_members, uint32_t creation) override;
  void release_group(uint32_t slot) noexcept override;

  // Where this rank sits on its node (xffl_set_node): the default device is node_local_rank modulo
  // the count. A node with more ranks than devices is XFFL_EUNSUPPORTED at once (NCCL needs a device
  // per rank; it would otherwise fail late, at init, with "Duplicate GPU detected").
  void set_node_place(int node_local_rank, int node_local_size) override;
  // Local. device_index -1 chooses node_local_rank modulo the device count. Makes the device current
  // and the pool hold `streams` streams. XFFL_ESTATE once communicators exist on another device.
  DeviceChoice select_device(int device_index, int node_local_rank, int streams) override;
  int device() const;  // chooses the default device (as select_device(-1)) when none was selected
  int device_count() const { return device_count_; }
  int streams() const;
  // The pool's stream `index` (a cudaStream_t), for the caller's own kernels.
  void *stream(int index) override;

  // Local: remembers which GroupSpec is the world group.
  void register_world(const GroupSpec &world) override;
  // Collective over the world: every rank, the same families in the same order. Always true: the
  // group's communicator is to be made now.
  bool prepare_family(const GroupSpec &group, int instance) override;

  // Local, before any layout: groups with crosses_facilities go over `host` (a host-memory backend,
  // UCX) through pinned host memory, instead of NCCL.
  void set_crossing_backend(std::shared_ptr<Backend> host) override;
  bool crossing_on_host() const override { return crossing_ != nullptr; }

  void set_timeout_ms(int timeout_ms);
  int timeout_ms() const { return context_->timeout_ms; }
  void set_stream_ordered(bool on) { context_->stream_ordered = on; }
  // The timeout and the completion mode here, everything on the crossing backend too.
  void apply(const LiveSettings &settings) override;

  MemoryKind memory_kind() const override { return MemoryKind::kDevice; }
  bool accepts_streams() const override { return true; }

  // What this rank made so far (tests, benchmark).
  int communicators_created() const { return communicators_created_; }
  int splits_called() const { return splits_called_; }

 private:
  struct Made {
    topology::RankList members;
    int instance;
    std::weak_ptr<nccl::NcclComm> comm;
  };
  struct Prepared {
    std::shared_ptr<nccl::NcclComm> comm;  // null: a group of one, or a crossing group
    int instance;
    bool crossing = false;  // made on the crossing backend
  };

  void ensure_device();
  const std::shared_ptr<nccl::NcclComm> &ensure_world();
  std::shared_ptr<nccl::NcclComm> find_made(const topology::RankList &members, int instance) const;
  std::shared_ptr<nccl::NcclComm> init_communicator(const nccl::UniqueId &id, int size, int index,
                                                    const nccl::WaitSubject &subject);
  std::shared_ptr<nccl::NcclComm> create_own_id_communicator(const GroupSpec &group);
  void check_member(const GroupSpec &group) const;
  bool crosses(const GroupSpec &group) const { return crossing_ && group.crosses_facilities; }
  std::unique_ptr<Communicator> create_staged(const GroupSpec &group, int instance);

  std::shared_ptr<NcclContext> context_;
  std::shared_ptr<Exchange> exchange_;
  std::shared_ptr<Backend> crossing_;  // null: every group on NCCL
  int device_count_ = 0;
  nccl::UniqueId world_id_;
  std::shared_ptr<nccl::NcclComm> world_;
  bool world_registered_ = false;
  unsigned long long world_tag_ = 0;
  std::map<unsigned long long, Prepared> prepared_;  // by tag, until the group's communicator is made
  std::vector<Made> made_;
  std::deque<nccl::Comm> split_results_;  // where NCCL publishes split children (stable addresses)
  int communicators_created_ = 0;
  int node_local_rank_ = -1;  // -1: not told (xffl_set_node not called); then the global rank stands in
  int node_local_size_ = 0;
  int splits_called_ = 0;
};

}  // namespace xffl::comm

#endif
