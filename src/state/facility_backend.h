// Facility mode's backend (facility_link.h): the state speaks global ranks; the job's main backend
// (UCX, NCCL) knows only the job's ranks. This wrapper translates every group that lies inside the
// facility (global rank O_i + j -> job rank j) before the main backend sees it, and passes the groups
// that cross facilities (GroupSpec::crosses_facilities: the FEDERATED family) through with their global
// ranks: the main backend hands those to its crossing backend (wan), which speaks global ranks.
// Everything else is forwarded as is. The main backend's messages name job ranks; a translated group's
// description says how they map to global ranks.
#ifndef XFFL_SRC_STATE_FACILITY_BACKEND_H
#define XFFL_SRC_STATE_FACILITY_BACKEND_H

#include <memory>
#include <vector>

#include "comm/communicator.h"

namespace xffl {

class FacilityBackend final : public comm::Backend {
 public:
  // main: the job's backend, its crossing backend set. offset: O_i; size: F_i (the job's world).
  FacilityBackend(std::shared_ptr<comm::Backend> main, int offset, int size);

  xffl_backend_t kind() const override { return main_->kind(); }
  std::unique_ptr<comm::Communicator> create_communicator(const comm::GroupSpec &group) override;
  // sorted_members are global ranks, all inside the facility (the state refuses others first).
  comm::GroupIdentity claim_group(const std::vector<int> &sorted_members, uint32_t creation) override;
  void release_group(uint32_t slot) noexcept override { main_->release_group(slot); }
  comm::MemoryKind memory_kind() const override { return main_->memory_kind(); }
  bool accepts_streams() const override { return main_->accepts_streams(); }
  void apply(const comm::LiveSettings &settings) override { main_->apply(settings); }
  void set_node_place(int node_local_rank, int node_local_size) override {
    main_->set_node_place(node_local_rank, node_local_size);
  }
  comm::DeviceChoice select_device(int device_index, int node_local_rank, int streams) override {
    return main_->select_device(device_index, node_local_rank, streams);
  }
  void *stream(int index) override { return main_->stream(index); }
  void register_world(const comm::GroupSpec &world) override { main_->register_world(to_job(world)); }
  bool prepare_family(const comm::GroupSpec &group, int instance) override;
  void set_crossing_backend(std::shared_ptr<comm::Backend> host) override { main_->set_crossing_backend(std::move(host)); }
  bool crossing_on_host() const override { return main_->crossing_on_host(); }

  const std::shared_ptr<comm::Backend> &main() const { return main_; }

 private:
  // The group in job ranks; XFFL_EUNSUPPORTED naming it when a member lies outside the facility.
  comm::GroupSpec to_job(const comm::GroupSpec &group) const;
  // Groups that cross facilities keep their global ranks.
  comm::GroupSpec for_main(const comm::GroupSpec &group) const {
    return group.crosses_facilities ? group : to_job(group);
  }

  std::shared_ptr<comm::Backend> main_;
  int offset_;
  int size_;
};

}  // namespace xffl

#endif
