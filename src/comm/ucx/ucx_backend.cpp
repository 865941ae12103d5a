#include "comm/ucx/ucx_backend.h"

#include "comm/ucx/tag.h"
#include "comm/ucx/ucx_api.h"
#include "comm/ucx/ucx_communicator.h"
#include "comm/ucx/ucx_worker.h"
#include "common/error.h"

namespace xffl::comm {

namespace {

std::shared_ptr<Backend> make_ucx(const BackendSetup &setup) {
  if (!setup.exchange) fail(XFFL_EINTERNAL, "UCX backend: made without the job's store");
  // The backend and the store it reads from, in one allocation: the backend is destroyed first.
  struct WithStore {
    explicit WithStore(const BackendSetup &from)
        : store(from.exchange),
          backend(from.rank, from.world_size, *store, from.timeout_ms, from.log_level, from.process_settings,
                  from.crossing) {}
    std::shared_ptr<Exchange> store;
    UcxBackend backend;
  };
  auto owner = std::make_shared<WithStore>(setup);
  return std::shared_ptr<Backend>(owner, &owner->backend);  // shares the owner's lifetime
}

}  // namespace

const BackendMaker kUcxMaker{&UcxBackend::load_ucx, /*rendezvous=*/true, /*barrier=*/true, /*takes_crossing=*/true,
                             &make_ucx};

UcxBackend::UcxBackend(int rank, int world_size, Exchange &exchange, int timeout_ms, xffl_log_level_t log_level,
                       bool process_settings, bool crossing)
    : exchange_(exchange) {
  if (world_size < 1 || rank < 0 || rank >= world_size)
    fail(XFFL_EINVAL, "UCX backend: rank ", rank, " outside [0, ", world_size, ")");
  if (timeout_ms <= 0) fail(XFFL_EINVAL, "UCX backend: timeout ", timeout_ms, " ms is not positive");
  ucx::UcxSettings settings;
  settings.timeout_ms = timeout_ms;
  settings.log_level = log_level;
  settings.process_settings = process_settings;
  settings.crossing = crossing;
  worker_ = std::make_shared<ucx::UcxWorker>(rank, world_size, exchange, settings);
}

UcxBackend::~UcxBackend() = default;

void UcxBackend::load_ucx() { ucx::ucx(); }

void UcxBackend::set_crossing_backend(std::shared_ptr<Backend> host) {
  if (host && host->memory_kind() != MemoryKind::kHost)
    fail(XFFL_EINTERNAL, "UCX backend: a crossing backend must move host memory");
  crossing_ = std::move(host);
}

std::unique_ptr<Communicator> UcxBackend::create_communicator(const GroupSpec &group) {
  if (crossing_ && group.crosses_facilities) return crossing_->create_communicator(group);
  const int size = group.members.size();
  if (size < 1 || static_cast<uint64_t>(size) > ucx::kMaxGroupSize)
    fail(XFFL_EUNSUPPORTED, "UCX backend: ", group.description, " has ", size, " members (1 to ",
         ucx::kMaxGroupSize, " supported)");
  if (group.my_index < 0 || group.my_index >= size || group.members.at(group.my_index) != worker_->rank())
    fail(XFFL_EINTERNAL, "UCX backend: rank ", worker_->rank(), " is not member ", group.my_index, " of ",
         group.description);
  ucx::GroupView view;
  view.members = group.members.to_vector();
  for (int member : view.members)
    if (member < 0 || member >= worker_->world_size())
      fail(XFFL_EINTERNAL, "UCX backend: ", group.description, " names rank ", member, " outside [0, ",
           worker_->world_size(), ")");
  view.my_index = group.my_index;
  view.description = group.description;
  if (group.tag >= ucx::kGroupTagLimit)
    fail(XFFL_EINTERNAL, "UCX backend: ", group.description, " has tag ", group.tag, ", outside [0, 2^20)");
  view.tag_bits = group.tag;
  view.plain_relay = crossing_ != nullptr;
  view.crosses_facilities = group.crosses_facilities;
  return std::make_unique<ucx::UcxCommunicator>(worker_, std::move(view));
}

GroupIdentity UcxBackend::claim_group(const std::vector<int> &sorted_members, uint32_t creation) {
  return exchange_.claim_group(sorted_members, creation, worker_->settings().timeout_ms);
}

void UcxBackend::release_group(uint32_t slot) noexcept { exchange_.release_group(slot); }

// The crossing backend's too: a UCX one (XFFL_CROSS_FACILITY_BACKEND=ucx) then needs no store either.
void UcxBackend::register_world(const GroupSpec &world) {
  worker_->load_address_table();
  if (crossing_) crossing_->register_world(world);
}

void UcxBackend::set_timeout_ms(int timeout_ms) {
  if (timeout_ms <= 0) fail(XFFL_EINVAL, "UCX backend: timeout ", timeout_ms, " ms is not positive");
  worker_->settings().timeout_ms = timeout_ms;
}

int UcxBackend::timeout_ms() const { return worker_->settings().timeout_ms; }
void UcxBackend::set_log_level(xffl_log_level_t level) { worker_->settings().log_level = level; }

void UcxBackend::apply(const LiveSettings &settings) {
  set_timeout_ms(settings.timeout_ms);
  set_log_level(settings.log_level);
  if (crossing_) crossing_->apply(settings);
}
void UcxBackend::set_tuning(const algorithms::Tuning &tuning) { worker_->settings().tuning = tuning; }
const algorithms::Tuning &UcxBackend::tuning() const { return worker_->settings().tuning; }
void UcxBackend::set_peer_failure_detection_on_host(bool on) { worker_->settings().peer_failure_detection_on_host = on; }

}  // namespace xffl::comm
