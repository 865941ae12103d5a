#include "state/group.h"

#include <utility>

namespace xffl {

Group::Group(comm::GroupSpec spec, std::shared_ptr<comm::Backend> backend, bool owned)
    : spec_(std::move(spec)), backend_(std::move(backend)), owned_(owned) {}

comm::Communicator &Group::communicator() {
  if (!communicator_) communicator_ = backend_->create_communicator(spec_);
  return *communicator_;
}

}  // namespace xffl
