// A process group instance: members, the caller's place, and its communicator (made lazily by the
// backend, so creating a group never costs a collective round).
#ifndef XFFL_SRC_STATE_GROUP_H
#define XFFL_SRC_STATE_GROUP_H

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "comm/communicator.h"
#include "state/call_gate.h"

namespace xffl {

class Group {
 public:
  // gate: the call gate of the state that makes the group (call_gate.h). claimed_slot: set for a
  // group of xffl_create_process_group, whose identity the job's authority gave it
  // (Backend::claim_group); such a group is owned by the caller and releases the slot when it ends,
  // after its communicator. Without one the group is borrowed (the layout's, WORLD).
  Group(comm::GroupSpec spec, std::shared_ptr<comm::Backend> backend, std::shared_ptr<CallGate> gate,
        std::optional<uint32_t> claimed_slot = std::nullopt);
  virtual ~Group();

  const comm::GroupSpec &spec() const { return spec_; }
  const topology::RankList &members() const { return spec_.members; }
  int my_index() const { return spec_.my_index; }
  const std::string &description() const { return spec_.description; }
  bool owned() const { return claimed_slot_.has_value(); }
  xffl_backend_t backend_kind() const { return backend_->kind(); }
  // The memory the group's collectives read and write (device memory is never copied through the host).
  comm::MemoryKind memory_kind() const { return backend_->memory_kind(); }
  // XFFL_ESTATE once the group was retired.
  comm::Communicator &communicator();
  // Ends a borrowed group with its layout (ending_call: "xffl_unset_hsdp"): its communicator goes,
  // and every later collective on it is XFFL_ESTATE naming the call that ended it.
  void retire(const char *ending_call);
  // The state's call gate, shared: calls on a group and on its state never overlap.
  CallGate &call_gate() const { return *gate_; }
  // A stream is a cudaStream_t for a backend that accepts streams (NCCL); the others take NULL
  // (XFFL_EINVAL otherwise).
  void check_stream(const void *stream) const;

 private:
  comm::GroupSpec spec_;
  std::shared_ptr<comm::Backend> backend_;  // shared: an owned group may outlive its state safely
  std::unique_ptr<comm::Communicator> communicator_;
  std::optional<uint32_t> claimed_slot_;
  std::shared_ptr<CallGate> gate_;
  const char *retired_by_ = nullptr;
};

}  // namespace xffl

// The C handle is the C++ object itself.
struct xffl_group final : xffl::Group {
  using xffl::Group::Group;
};

#endif
