#include "state/facility_backend.h"

#include "common/error.h"

namespace xffl {

FacilityBackend::FacilityBackend(std::shared_ptr<comm::Backend> main, int offset, int size)
    : main_(std::move(main)), offset_(offset), size_(size) {}

comm::GroupSpec FacilityBackend::to_job(const comm::GroupSpec &group) const {
  std::vector<int> members = group.members.to_vector();
  for (int &member : members) {
    if (member < offset_ || member >= offset_ + size_)
      fail(XFFL_EUNSUPPORTED, group.description, " holds rank ", member, ", outside this facility's ranks [", offset_,
           ", ", offset_ + size_, "): in facility mode only the federated groups cross facilities");
    member -= offset_;
  }
  comm::GroupSpec job = group;
  job.members = topology::RankList::explicit_ranks(std::move(members));
  // The main backend's messages name its own (job) ranks: say how they map to the global ones.
  if (offset_ != 0)
    job.description += " (ranks of this facility's job: job rank j is global rank " + std::to_string(offset_) + " + j)";
  return job;
}

std::unique_ptr<comm::Communicator> FacilityBackend::create_communicator(const comm::GroupSpec &group) {
  return main_->create_communicator(for_main(group));
}

bool FacilityBackend::prepare_family(const comm::GroupSpec &group, int instance) {
  return main_->prepare_family(for_main(group), instance);
}

comm::GroupIdentity FacilityBackend::claim_group(const std::vector<int> &sorted_members, uint32_t creation) {
  std::vector<int> job;
  job.reserve(sorted_members.size());
  for (int member : sorted_members) {
    if (member < offset_ || member >= offset_ + size_)
      fail(XFFL_EUNSUPPORTED, "a process group holding rank ", member, " outside this facility's ranks [", offset_,
           ", ", offset_ + size_, "): in facility mode only the federated groups cross facilities");
    job.push_back(member - offset_);
  }
  return main_->claim_group(job, creation);
}

}  // namespace xffl
