#include "comm/nccl/nccl_backend.h"

#include <cstdio>
#include <cstring>
#include <utility>

#include "comm/nccl/device_streams.h"
#include "comm/nccl/family_plan.h"
#include "comm/nccl/host_staged_communicator.h"
#include "comm/nccl/nccl_communicator.h"
#include "comm/nccl/nccl_types.h"
#include "common/error.h"

namespace xffl::comm {

using namespace nccl;

namespace {

const char *const kWorldIdKey = "nccl/world/id";

std::vector<uint8_t> id_bytes(const UniqueId &id) { return std::vector<uint8_t>(id.bytes, id.bytes + sizeof id.bytes); }

UniqueId id_from(const std::vector<uint8_t> &bytes, const std::string &key) {
  UniqueId id;
  if (bytes.size() != sizeof id.bytes)
    fail(XFFL_EPEER, "NCCL backend: the id under '", key, "' has ", bytes.size(), " bytes, not ", sizeof id.bytes);
  std::memcpy(id.bytes, bytes.data(), sizeof id.bytes);
  return id;
}

// Serials are unique for the job, so every group's key is new (the store's keys are write-once).
std::string group_key(uint64_t serial) {
  char text[40];
  std::snprintf(text, sizeof text, "nccl/group/%016llx", static_cast<unsigned long long>(serial));
  return text;
}

}  // namespace

NcclBackend::NcclBackend(std::shared_ptr<NcclApi> api, std::shared_ptr<Exchange> exchange, int rank, int world_size,
                         int timeout_ms)
    : context_(std::make_shared<NcclContext>()), exchange_(std::move(exchange)) {
  if (world_size < 1 || rank < 0 || rank >= world_size)
    fail(XFFL_EINVAL, "NCCL backend: rank ", rank, " outside [0, ", world_size, ")");
  if (timeout_ms <= 0) fail(XFFL_EINVAL, "NCCL backend: timeout ", timeout_ms, " ms is not positive");
  if (!api || !exchange_) fail(XFFL_EINTERNAL, "NCCL backend: no NCCL API or exchange");
  context_->api = std::move(api);
  context_->rank = rank;
  context_->world_size = world_size;
  context_->timeout_ms = timeout_ms;
  NcclApi &nccl = *context_->api;
  device_count_ = cuda_device_count(nccl);
  if (rank == 0) {
    const int rc = nccl.get_unique_id(&world_id_);
    if (rc != kNcclSuccess) fail_nccl(nccl, rc, nullptr, "rank 0: making the world's NCCL id (ncclGetUniqueId)");
    exchange_->publish(kWorldIdKey, id_bytes(world_id_));
  } else {
    world_id_ = id_from(exchange_->fetch(kWorldIdKey, timeout_ms), kWorldIdKey);
  }
}

NcclBackend::~NcclBackend() {
  prepared_.clear();
  world_.reset();  // communicators before the device's streams (the context may outlive us)
  crossing_.reset();
}

void NcclBackend::check_member(const GroupSpec &group) const {
  const int size = group.members.size();
  if (size < 1 || group.my_index < 0 || group.my_index >= size || group.members.at(group.my_index) != context_->rank)
    fail(XFFL_EINTERNAL, "NCCL backend: rank ", context_->rank, " is not member ", group.my_index, " of ",
         group.description);
  for (int i = 0; i < size; ++i)
    if (group.members.at(i) < 0 || group.members.at(i) >= context_->world_size)
      fail(XFFL_EINTERNAL, "NCCL backend: ", group.description, " names rank ", group.members.at(i), " outside [0, ",
           context_->world_size, ")");
}

void NcclBackend::set_node_place(int node_local_rank, int node_local_size) {
  if (node_local_size > device_count_)
    fail(XFFL_EUNSUPPORTED, "rank ", context_->rank, ": its node runs ", node_local_size, " ranks but CUDA sees ",
         device_count_, " device", device_count_ == 1 ? "" : "s",
         "; NCCL needs a device of its own for every rank (start at most ", device_count_,
         " ranks per node, or give each rank its own CUDA_VISIBLE_DEVICES)");
  node_local_rank_ = node_local_rank;
  node_local_size_ = node_local_size;
}

DeviceChoice NcclBackend::select_device(int device_index, int node_local_rank, int streams) {
  const int device = choose_device(device_index, node_local_rank, device_count_);
  if (streams < 1) fail(XFFL_EINVAL, "streams ", streams, " must be at least 1");
  if (context_->device && context_->device->device() == device) {
    context_->device->grow(streams);
    context_->device->make_current();
    return DeviceChoice{device, device_count_};
  }
  if (context_->device && (world_ || communicators_created_ > 0))
    fail(XFFL_ESTATE, "rank ", context_->rank, ": NCCL communicators already exist on CUDA device ",
         context_->device->device(), "; choose the device (xffl_set_exec_device) before the first collective");
  context_->device.reset();
  context_->device = std::make_unique<DeviceStreams>(context_->api, device, streams);
  return DeviceChoice{device, device_count_};
}

void NcclBackend::ensure_device() {
  if (context_->device) return;
  // Chosen lazily (no xffl_set_exec_device): unlike that call, this one leaves the caller's device.
  NcclApi &api = *context_->api;
  int saved = -1;
  const int rc = api.get_device(&saved);
  if (rc != kCudaSuccess) fail_cuda(api, rc, "reading the calling thread's CUDA device (cudaGetDevice)");
  select_device(-1, node_local_rank_ >= 0 ? node_local_rank_ : context_->rank, 1);
  api.set_device(saved);
}

int NcclBackend::device() const {
  const_cast<NcclBackend *>(this)->ensure_device();
  return context_->device->device();
}

int NcclBackend::streams() const { return context_->device ? context_->device->size() : 0; }

void *NcclBackend::stream(int index) {
  ensure_device();
  if (index < 0 || index >= context_->device->size())
    fail(XFFL_EINVAL, "stream index ", index, " outside [0, ", context_->device->size(), ")");
  return context_->device->at(index);
}

void NcclBackend::set_timeout_ms(int timeout_ms) {
  if (timeout_ms <= 0) fail(XFFL_EINVAL, "NCCL backend: timeout ", timeout_ms, " ms is not positive");
  context_->timeout_ms = timeout_ms;
}

void NcclBackend::apply(const LiveSettings &settings) {
  set_timeout_ms(settings.timeout_ms);
  set_stream_ordered(settings.stream_ordered);
  if (crossing_) crossing_->apply(settings);
}

std::shared_ptr<NcclComm> NcclBackend::init_communicator(const UniqueId &id, int size, int index,
                                                         const WaitSubject &subject) {
  ensure_device();
  const DeviceScope scope(*context_->api, context_->device.get());  // NCCL creates it on the current device
  NcclApi &api = *context_->api;
  Comm handle = nullptr;
  const int rc = api.comm_init_rank(&handle, size, id, index);
  if (rc != kNcclSuccess && rc != kNcclInProgress) {
    if (handle) api.comm_abort(handle);
    fail_nccl(api, rc, nullptr, "rank " + std::to_string(context_->rank) + ": " + subject.awaited + " in " + subject.group);
  }
  auto comm = std::make_shared<NcclComm>(context_->api, handle, size);
  ++communicators_created_;
  await_ready(api, {comm.get()}, subject, context_->timeout_ms);
  return comm;
}

const std::shared_ptr<NcclComm> &NcclBackend::ensure_world() {
  if (world_) {
    world_->check_usable(WaitSubject{context_->rank, "world group", "the world communicator"});
    return world_;
  }
  const int size = context_->world_size;
  world_ = init_communicator(world_id_, size, context_->rank,
                             WaitSubject{context_->rank, "world group",
                                         "the world communicator's initialisation (ncclCommInitRankConfig, " +
                                             std::to_string(size) + " ranks)"});
  made_.push_back(Made{topology::RankList::progression(0, 1, size), 0, world_});
  return world_;
}

std::shared_ptr<NcclComm> NcclBackend::find_made(const topology::RankList &members, int instance) const {
  for (const Made &made : made_)
    if (made.instance == instance && made.members == members)
      if (auto comm = made.comm.lock(); comm && !comm->aborted()) return comm;
  return nullptr;
}

void NcclBackend::register_world(const GroupSpec &world) {
  check_member(world);
  if (world.members.size() != context_->world_size)
    fail(XFFL_EINTERNAL, "NCCL backend: the world group has ", world.members.size(), " members, not ",
         context_->world_size);
  world_registered_ = true;
  world_tag_ = world.tag;
}

void NcclBackend::set_crossing_backend(std::shared_ptr<Backend> host) { crossing_ = std::move(host); }

std::unique_ptr<Communicator> NcclBackend::create_staged(const GroupSpec &group, int instance) {
  if (group.members.size() == 1)  // alone in it: nothing crosses, a device copy does
    return std::make_unique<NcclCommunicator>(context_, nullptr, group.description, instance);
  return std::make_unique<HostStagedCommunicator>(context_, crossing_->create_communicator(group), group, instance);
}

bool NcclBackend::prepare_family(const GroupSpec &group, int instance) {
  // A crossing group's members are the crossing backend's to check: in facility mode they are global
  // ranks beyond this job's (state/facility_backend.h).
  if (!crosses(group)) check_member(group);
  if (crosses(group)) {  // every rank skips the split alike: crosses_facilities is per family
    prepared_[group.tag] = Prepared{nullptr, instance, true};
    return true;
  }
  const std::shared_ptr<NcclComm> &world = ensure_world();
  std::shared_ptr<NcclComm> existing = find_made(group.members, instance);
  const FamilyDecision decision =
      decide_family(group.members, group.my_index, context_->world_size, existing != nullptr);
  std::shared_ptr<NcclComm> child;
  if (decision.call_split) {
    const WaitSubject subject{context_->rank, group.description,
                              "the split of its group family (ncclCommSplit, colour " + std::to_string(decision.color) +
                                  ")"};
    NcclApi &api = *context_->api;
    const DeviceScope scope(api, context_->device.get());
    // A nonblocking split writes NULL at once and stores the child in this slot only when it completes
    // (NCCL's group thread), reporting progress on the parent meanwhile: the slot must outlive the
    // wait, even one that ends in a timeout, so the backend owns it.
    Comm &handle = split_results_.emplace_back(nullptr);
    ++splits_called_;
    const int rc = api.comm_split(world->handle(), decision.color, decision.key, &handle);
    if (rc != kNcclSuccess && rc != kNcclInProgress)
      fail_nccl(api, rc, world->handle(), "rank " + std::to_string(context_->rank) + ": " + subject.awaited + " for " +
                                              group.description);
    await_ready(api, {world.get()}, subject, context_->timeout_ms);
    if (handle) {
      child = std::make_shared<NcclComm>(context_->api, handle, group.members.size());
      ++communicators_created_;
      await_ready(api, {child.get()}, subject, context_->timeout_ms);
    }
    if (decision.route == FamilyRoute::kSplit && !child)
      fail(XFFL_EBACKEND, "rank ", context_->rank, ": ncclCommSplit made no communicator for ", group.description,
           " (colour ", decision.color, ")");
  }
  Prepared prepared{nullptr, instance};
  if (decision.route == FamilyRoute::kShare) prepared.comm = existing;
  if (decision.route == FamilyRoute::kSplit) {
    prepared.comm = child;
    made_.push_back(Made{group.members, instance, child});
  }
  prepared_[group.tag] = prepared;
  return true;
}

std::shared_ptr<NcclComm> NcclBackend::create_own_id_communicator(const GroupSpec &group) {
  if (group.serial == 0)
    fail(XFFL_EINTERNAL, "NCCL backend: ", group.description, " has no serial to publish its NCCL id under");
  const std::string key = group_key(group.serial);
  UniqueId id;
  if (group.my_index == 0) {
    const int rc = context_->api->get_unique_id(&id);
    if (rc != kNcclSuccess)
      fail_nccl(*context_->api, rc, nullptr, "rank " + std::to_string(context_->rank) + ": making the NCCL id of " +
                                                 group.description);
    exchange_->publish(key, id_bytes(id));
  } else {
    id = id_from(exchange_->fetch(key, context_->timeout_ms), key);
  }
  return init_communicator(id, group.members.size(), group.my_index,
                           WaitSubject{context_->rank, group.description,
                                       "its communicator's initialisation (ncclCommInitRankConfig, " +
                                           std::to_string(group.members.size()) + " members)"});
}

std::unique_ptr<Communicator> NcclBackend::create_communicator(const GroupSpec &group) {
  if (!crosses(group)) check_member(group);  // as in prepare_family
  ensure_device();
  if (world_registered_ && group.tag == world_tag_)
    return std::make_unique<NcclCommunicator>(context_, ensure_world(), group.description, 0);
  if (auto found = prepared_.find(group.tag); found != prepared_.end()) {
    Prepared prepared = std::move(found->second);
    prepared_.erase(found);
    if (prepared.crossing) return create_staged(group, prepared.instance);
    return std::make_unique<NcclCommunicator>(context_, std::move(prepared.comm), group.description,
                                              prepared.instance);
  }
  if (crosses(group)) return create_staged(group, 0);
  if (group.members.size() == 1) return std::make_unique<NcclCommunicator>(context_, nullptr, group.description, 0);
  return std::make_unique<NcclCommunicator>(context_, create_own_id_communicator(group), group.description, 0);
}

GroupIdentity NcclBackend::claim_group(const std::vector<int> &sorted_members, uint32_t creation) {
  return exchange_->claim_group(sorted_members, creation, context_->timeout_ms);
}

void NcclBackend::release_group(uint32_t slot) noexcept { exchange_->release_group(slot); }

}  // namespace xffl::comm
