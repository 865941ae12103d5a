#include "state/group.h"

#include <utility>

#include "comm/backend_table.h"
#include "common/error.h"

namespace xffl {

Group::Group(comm::GroupSpec spec, std::shared_ptr<comm::Backend> backend, std::shared_ptr<CallGate> gate,
             std::optional<uint32_t> claimed_slot)
    : spec_(std::move(spec)), backend_(std::move(backend)), claimed_slot_(claimed_slot), gate_(std::move(gate)) {}

Group::~Group() {
  communicator_.reset();  // its messages are done before the slot may serve another group
  if (claimed_slot_) backend_->release_group(*claimed_slot_);
}

comm::Communicator &Group::communicator() {
  if (retired_by_)
    fail(XFFL_ESTATE, spec_.description, " ended with ", retired_by_,
         ": a borrowed group (xffl_get_group) lives until its layout is unset or its state destroyed");
  if (!communicator_) communicator_ = backend_->create_communicator(spec_);
  return *communicator_;
}

void Group::retire(const char *ending_call) {
  communicator_.reset();
  retired_by_ = ending_call;
}

void Group::check_stream(const void *stream) const {
  if (stream && !backend_->accepts_streams())
    fail(XFFL_EINVAL, "stream must be NULL for host memory (backend ", comm::backend_name(backend_->kind()),
         " takes no stream)");
}

}  // namespace xffl
