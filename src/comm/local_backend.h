// XFFL_BACKEND_NONE: topology only. One-member groups work (the collective is a local copy);
// groups with more members refuse with XFFL_EUNSUPPORTED.
#ifndef XFFL_SRC_COMM_LOCAL_BACKEND_H
#define XFFL_SRC_COMM_LOCAL_BACKEND_H

#include "comm/backend_table.h"
#include "comm/communicator.h"

namespace xffl::comm {

class LocalBackend final : public Backend {
 public:
  xffl_backend_t kind() const override { return XFFL_BACKEND_NONE; }
  std::unique_ptr<Communicator> create_communicator(const GroupSpec &group) override;
  GroupIdentity claim_group(const std::vector<int> &sorted_members, uint32_t creation) override;
  void release_group(uint32_t slot) noexcept override { (void)slot; }

 private:
  uint64_t groups_made_ = 0;
};

// The factory's maker (backend_table.cpp): local, no rendezvous.
extern const BackendMaker kLocalMaker;

}  // namespace xffl::comm

#endif
