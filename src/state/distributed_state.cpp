#include "state/distributed_state.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "federation/settings.h"
#include "state/backend_factory.h"
#include "state/fields.h"
#include "common/error.h"
#include "common/log.h"
#include "topology/layout.h"

namespace xffl {

namespace {

const char *layout_call(Layout layout) {
  switch (layout) {
    case Layout::Fsdp: return "xffl_set_fsdp";
    case Layout::Hsdp: return "xffl_set_hsdp";
    case Layout::Federated: return "xffl_federated_scaling";
    case Layout::None: break;
  }
  return "no layout";
}

const char *unset_call(Layout layout) {
  switch (layout) {
    case Layout::Fsdp: return "xffl_unset_fsdp";
    case Layout::Hsdp: return "xffl_unset_hsdp";
    case Layout::Federated: return "xffl_unset_federated_scaling";
    case Layout::None: break;
  }
  return "nothing";
}

const char *group_kind_name(xffl_group_kind_t kind) {
  switch (kind) {
    case XFFL_GROUP_WORLD: return "world";
    case XFFL_GROUP_FSDP: return "fsdp";
    case XFFL_GROUP_HSDP_REPLICA: return "hsdp replica";
    case XFFL_GROUP_HSDP_SHARD: return "hsdp shard";
    case XFFL_GROUP_FEDERATED: return "federated";
    case XFFL_GROUP_REPLICA: return "replica";
    case XFFL_GROUP_FEDERATION: return "federation";
  }
  return "unknown";
}

// Group tags: equal on every member, distinct between live groups that share a member (backends
// match messages by tag), below 2^20. The layout's groups get [0, 2^19) from (generation, family,
// instance): every rank makes the same layouts in the same order. Groups of xffl_create_process_group
// get 2^19 + the slot that the job's authority (the store) gave them: unique among live groups by
// construction (bootstrap/group_registry.h).
constexpr unsigned long long kCustomTagBase = 1ULL << 19;
constexpr int kMaxStreams = 32;     // instances per family: 32 tags per family and generation
constexpr unsigned kGenerations = 2048;  // layouts before tags repeat: 2048 * 8 families * 32 = 2^19

unsigned long long layout_tag(unsigned generation, xffl_group_kind_t kind, int instance) {
  return ((static_cast<unsigned long long>(generation % kGenerations) * 8 + static_cast<unsigned long long>(kind)) *
          kMaxStreams) + static_cast<unsigned long long>(instance);
}

}  // namespace

DistributedState::DistributedState() : options_(Options::from_environment()) {}
DistributedState::~DistributedState() {
  // Before any member goes: a request's thread may still drive the backend and its groups.
  if (std::shared_ptr<Request> request = in_flight_.lock()) request->finish_run();
}

void DistributedState::require_global(const char *call) const {
  if (!is_global_setup()) fail(XFFL_ESTATE, call, " needs xffl_set_global first");
}

void DistributedState::require_no_layout(const char *call) const {
  require_global(call);
  if (layout_ != Layout::None)
    fail(XFFL_ESTATE, call, " after ", layout_call(layout_), ": call ", unset_call(layout_), " first");
}

void DistributedState::require_layout(Layout layout, const char *call) const {
  if (layout_ != layout)
    fail(XFFL_ESTATE, call, ": the layout is ", layout_ == Layout::None ? "not set" : layout_call(layout_),
         ", not ", layout_call(layout));
}

void DistributedState::set_global(xffl_backend_t backend, xffl_device_t device_type, const std::string &master_addr,
                                  int master_port, int rank, int world_size, bool store_address_from_pmix) {
  if (is_global_setup()) fail(XFFL_ESTATE, "xffl_set_global was already called on this state");
  const comm::BackendEntry &entry = backend_entry(backend);
  if (device_type != XFFL_DEVICE_CPU && device_type != XFFL_DEVICE_CUDA)
    fail(XFFL_EINVAL, "device type ", static_cast<int>(device_type), " is not XFFL_DEVICE_CPU or XFFL_DEVICE_CUDA");
  if (master_addr.empty() && !store_address_from_pmix) fail(XFFL_EINVAL, "master address is empty");
  if (master_port < 0 || master_port > 65535) fail(XFFL_EINVAL, "master port ", master_port, " outside [0, 65535]");
  topology::check_rank(rank, world_size);
  // The execution device must hold the memory the backend moves: checked from the table, before any
  // rendezvous.
  const bool device_memory = entry.memory == comm::MemoryKind::kDevice;
  if (device_memory && device_type != XFFL_DEVICE_CUDA)
    fail(XFFL_EINVAL, "backend ", entry.name, " needs device type cuda");
  if (device_type == XFFL_DEVICE_CUDA && !device_memory) {
    std::string device_backends;
    for (const comm::BackendEntry &line : comm::backend_table())
      if (line.memory == comm::MemoryKind::kDevice)
        device_backends += (device_backends.empty() ? "" : " or ") + std::string(line.name);
    fail(XFFL_EUNSUPPORTED, "device type cuda needs backend ", device_backends, " (", entry.name,
         " moves host memory)");
  }

  // Facility mode is checked before any rank waits (the facility index, WORLD_SIZE == F_i).
  std::shared_ptr<FacilityLink> facility = FacilityLink::from_options(options_, rank, world_size);
  if (facility) check_quorum(static_cast<int>(facility->sizes().size()), "xffl_set_global");
  // Under continue the lease TTL must be shorter than the timeout (federation/settings.h): refused here,
  // before any rank waits, whatever the backend.
  const bool continues = facility && options_.facility_faults == XFFL_FACILITY_FAULTS_CONTINUE;
  const int64_t lease_ttl = continues ? federation::continue_lease_ttl_seconds(process_environment(), options_.timeout_ms) : 0;

  std::shared_ptr<comm::Backend> made =
      make_backend(GlobalConfig{backend, master_addr, master_port, rank, world_size, store_address_from_pmix},
                   options_, facility);
  // XFFL_FACILITY_FAULTS_CONTINUE: job rank 0 takes the facility's lease once every rank of the job
  // has published its crossing address (make_backend's barrier), so that a facility admitted into the
  // federation can be reached at once.
  // Backend NONE (topology only) never averages: it takes no lease and connects to nothing.
  if (continues && backend != XFFL_BACKEND_NONE) {
    facility_rounds_ = std::make_unique<FacilityRounds>(facility, rank, options_.timeout_ms,
                                                        options_.federation_quorum, lease_ttl, options_.auth_token,
                                                        options_.job_id,
                                                        Logger(options_.log_level, facility->global_rank(rank)));
  }
  backend_ = std::move(made);
  facility_ = facility;
  backend_kind_ = backend;
  device_type_ = device_type;
  master_addr_ = store_address_from_pmix ? "pmix" : master_addr;
  master_port_ = master_port;
  rank_ = facility ? facility->global_rank(rank) : rank;
  world_size_ = facility ? facility->world_size() : world_size;
  device_count_ = 1;
  // WORLD is the job's ranks: everyone in single-world mode, the facility's job in facility mode.
  comm::GroupSpec world{topology::RankList::progression(facility ? facility->offset() : 0, 1, world_size), rank,
                        "world group", layout_tag(0, XFFL_GROUP_WORLD, 0)};
  groups_[XFFL_GROUP_WORLD].push_back(std::make_unique<xffl_group>(std::move(world), backend_, call_gate_));
  backend_->register_world(groups_[XFFL_GROUP_WORLD].back()->spec());
}

void DistributedState::require_settable(xffl_option_t option) const {
  if (Options::read_by_set_global(option) && is_global_setup())
    fail(XFFL_ESTATE, Options::name(option), " is read by xffl_set_global, which was already called; set ",
         Options::name(option), " before it");
}

void DistributedState::set_option(xffl_option_t option, int value) {
  // Setting an option xffl_set_global read to the value it already has changes nothing: allowed.
  if (Options::read_by_set_global(option) && !Options::is_string_option(option) && value == options_.get(option)) return;
  require_settable(option);
  if (option == XFFL_OPT_TIMEOUT_MS && value > 0 && facility_rounds_)
    federation::check_lease_ttl(facility_rounds_->lease_ttl_seconds(), value, "fixed by xffl_set_global");
  if (option == XFFL_OPT_FEDERATED_STRATEGY) federated_strategies_.require(value);
  const xffl_wire_format_t wire_format = options_.wire_format;
  options_.set(option, value);
  // Residuals belong to one wire format with error feedback on: turning it off or changing the format
  // drops them (setting the same format again keeps them).
  if (!options_.error_feedback || options_.wire_format != wire_format) error_feedback_->clear();
  if (backend_) backend_->apply(live_settings(options_));
}

void DistributedState::set_node(int local_rank, int local_size, int node_rank, int node_world_size) {
  require_global("xffl_set_node");
  if (layout_ != Layout::None)
    fail(XFFL_ESTATE, "xffl_set_node after ", layout_call(layout_), ": set the node before the layout");
  if (local_size < 1) fail(XFFL_EINVAL, "node local size ", local_size, " must be at least 1");
  if (local_rank < 0 || local_rank >= local_size)
    fail(XFFL_EINVAL, "node local rank ", local_rank, " outside [0, ", local_size, ")");
  // The launcher's nodes are the job's (in facility mode, the facility's job's).
  const int job_world = job_world_size();
  if (job_world % local_size != 0)
    fail(XFFL_EINVAL, "node local size ", local_size, " does not divide world size ", job_world);
  if (job_world / local_size != node_world_size)
    fail(XFFL_EINVAL, "node world size ", node_world_size, " is not world size ", job_world, " / node local size ",
         local_size, " = ", job_world / local_size);
  if (node_rank < 0 || node_rank >= node_world_size)
    fail(XFFL_EINVAL, "node rank ", node_rank, " outside [0, ", node_world_size, ")");
  backend_->set_node_place(local_rank, local_size);  // may refuse: before anything changes
  node_ = NodeInfo{local_rank, local_size, node_rank, node_world_size};
}

void DistributedState::set_exec_device(int device_index, int streams) {
  require_global("xffl_set_exec_device");
  // After a layout (xffl_state_from_env sets one) the device may still be chosen, but not the stream
  // count: the layout's FEDERATED and REPLICA groups were made with streams_ instances.
  if (layout_ != Layout::None && streams != streams_)
    fail(XFFL_ESTATE, "xffl_set_exec_device after ", layout_call(layout_), ": streams ", streams, " differs from the ",
         streams_, " the layout's groups were made with; keep ", streams_, " or call ", unset_call(layout_),
         " first");
  if (streams < 1 || streams > kMaxStreams)
    fail(XFFL_EINVAL, "streams ", streams, " outside [1, ", kMaxStreams, "]");
  if (device_index < -1) fail(XFFL_EINVAL, "device index ", device_index, " must be -1 (choose) or a device index");
  if (device_type_ == XFFL_DEVICE_CUDA) {
    const auto [device, count] = backend_->select_device(device_index, node_ ? node_->local_rank : 0, streams);
    current_device_ = device;
    device_count_ = count;
    streams_ = streams;
    return;
  }
  // CPU execution: one device, index 0.
  if (device_index > 0)
    fail(XFFL_EINVAL, "device index ", device_index, " outside [0, 1) for cpu execution (use -1 or 0)");
  current_device_ = 0;
  streams_ = streams;
}

void DistributedState::set_init_device(xffl_device_t init_device, bool meta_initialization) {
  require_global("xffl_set_init_device");
  if (init_device != XFFL_DEVICE_CPU && init_device != XFFL_DEVICE_CUDA && init_device != XFFL_DEVICE_META)
    fail(XFFL_EINVAL, "init device ", static_cast<int>(init_device), " is not cpu, cuda or meta");
  if (init_device == XFFL_DEVICE_CUDA && device_type_ != XFFL_DEVICE_CUDA)
    fail(XFFL_EINVAL, "init device cuda needs device type cuda in xffl_set_global");
  init_device_ = init_device;
  meta_initialization_ = meta_initialization;
}

void DistributedState::add_group(xffl_group_kind_t kind, int instances, const topology::RankList &members,
                                 const std::string &description) {
  const int my_index = members.index_of(rank_);
  if (my_index < 0) fail(XFFL_EINTERNAL, description, " does not contain rank ", rank_);
  for (int instance = 0; instance < instances; ++instance) {
    std::string text = description;
    if (instances > 1) text += " (instance " + std::to_string(instance) + ")";
    comm::GroupSpec spec{members, my_index, std::move(text), layout_tag(layout_generation_, kind, instance)};
    spec.crosses_facilities = kind == XFFL_GROUP_FEDERATED;
    auto group = std::make_unique<xffl_group>(std::move(spec), backend_, call_gate_);
    // A backend that makes communicators eagerly (NCCL: one split per family) makes them here, every
    // rank in the same layout order.
    if (backend_->prepare_family(group->spec(), instance)) group->communicator();
    groups_[kind].push_back(std::move(group));
  }
}

void DistributedState::check_inside_facility(const topology::RankPlan &plan) const {
  if (!facility_) return;
  auto check = [&](const std::optional<topology::RankList> &members, xffl_group_kind_t kind) {
    if (!members) return;
    for (int i = 0; i < members->size(); ++i)
      if (!facility_->holds(members->at(i)))
        fail(XFFL_EUNSUPPORTED, "the ", group_kind_name(kind), " group of rank ", rank_, " holds rank ",
             members->at(i),
             " of another facility; in facility mode (XFFL_FACILITY=", facility_->facility(),
             ") only the federated groups cross facilities: use xffl_federated_scaling");
  };
  check(plan.fsdp_group, XFFL_GROUP_FSDP);
  check(plan.hsdp_replica_group, XFFL_GROUP_HSDP_REPLICA);
  check(plan.hsdp_shard_group, XFFL_GROUP_HSDP_SHARD);
  check(plan.federation, XFFL_GROUP_FEDERATION);
  check(plan.replica_group, XFFL_GROUP_REPLICA);
}

void DistributedState::install_layout(Layout layout, topology::RankPlan plan) {
  check_inside_facility(plan);  // before anything changes
  // Local work only (a group is a member list and a tag space), timed so users can see it is cheap.
  PhaseTimer timer(Logger(options_.log_level, rank_), std::string("group creation for ") + layout_call(layout));
  ++layout_generation_;
  const topology::RankPlan &p = plan;
  const std::string at = " of rank " + std::to_string(rank_);
  if (p.fsdp_group) add_group(XFFL_GROUP_FSDP, 1, *p.fsdp_group, "fsdp group" + at);
  if (p.hsdp_replica_group)
    add_group(XFFL_GROUP_HSDP_REPLICA, 1, *p.hsdp_replica_group,
              "hsdp replica group (shard " + std::to_string(*p.replica_local_rank) + ")" + at);
  if (p.hsdp_shard_group)
    add_group(XFFL_GROUP_HSDP_SHARD, 1, *p.hsdp_shard_group,
              "hsdp shard group (replica " + std::to_string(*p.replica_rank) + ")" + at);
  if (p.federation)
    add_group(XFFL_GROUP_FEDERATION, 1, *p.federation,
              "federation " + std::to_string(*p.federated_rank) + at);
  if (p.federated_group) add_group(XFFL_GROUP_FEDERATED, streams_, *p.federated_group, "federated group" + at);
  if (p.replica_group)
    add_group(XFFL_GROUP_REPLICA, streams_, *p.replica_group,
              "replica group of federation " + std::to_string(*p.federated_rank) + at);
  plan_ = std::move(plan);
  layout_ = layout;
}

void DistributedState::clear_layout(const char *ending_call) {
  // Borrowed handles may still be held: each group ends (its communicator goes) but its shell stays,
  // so a later use is XFFL_ESTATE naming ending_call instead of a read of freed memory.
  for (int kind = XFFL_GROUP_FSDP; kind <= XFFL_GROUP_FEDERATION; ++kind) {
    for (auto &group : groups_[static_cast<size_t>(kind)]) {
      group->retire(ending_call);
      retired_groups_.push_back(std::move(group));
    }
    groups_[static_cast<size_t>(kind)].clear();
  }
  plan_.reset();
  federated_weights_.clear();
  live_facilities_.clear();
  completed_averages_ = std::make_shared<std::atomic<int64_t>>(0);  // a late request counts for its own layout
  error_feedback_->clear();
  hop_scratch_->release();
  layout_ = Layout::None;
}

void DistributedState::set_fsdp() {
  require_no_layout("xffl_set_fsdp");
  install_layout(Layout::Fsdp, topology::plan_fsdp(world_size_, rank_));
}

void DistributedState::set_hsdp(int hsdp) {
  require_no_layout("xffl_set_hsdp");
  install_layout(Layout::Hsdp, topology::plan_hsdp(world_size_, hsdp, rank_));
}

void DistributedState::federated_scaling(const std::vector<int> &sizes, int hsdp) {
  require_no_layout("xffl_federated_scaling");
  auto expanded = std::make_shared<const std::vector<int>>(topology::expand_federated_sizes(world_size_, sizes));
  if (facility_) facility_->check_layout_sizes(*expanded);
  check_quorum(static_cast<int>(expanded->size()), "xffl_federated_scaling");
  const int facilities = static_cast<int>(expanded->size());
  install_layout(Layout::Federated, topology::plan_federated(world_size_, std::move(expanded), hsdp, rank_));
  live_facilities_.clear();
  for (int facility = 0; facility < facilities; ++facility) live_facilities_.push_back(facility);
}

void DistributedState::set_fsdp_mesh(const std::vector<int> &ranks) {
  require_no_layout("xffl_set_fsdp_mesh");
  install_layout(Layout::Fsdp, topology::plan_fsdp_mesh(world_size_, ranks, rank_));
}

void DistributedState::set_hsdp_manual(int replica_local_rank, int replica_local_size, int replica_rank,
                                       const std::vector<int> &replica_world_size) {
  require_no_layout("xffl_set_hsdp_manual");
  topology::check_hsdp_manual(world_size_, rank_, replica_local_rank, replica_local_size, replica_rank,
                              replica_world_size);
  install_layout(Layout::Hsdp, topology::plan_hsdp(world_size_, replica_local_size, rank_));
}

std::vector<int> DistributedState::communicating_processes(int federated_rank) const {
  require_layout(Layout::Federated, "xffl_get_communicating_processes");
  const std::vector<int> &sizes = *plan_->federated_local_size;
  if (federated_rank < 0 || federated_rank >= static_cast<int>(sizes.size()))
    fail(XFFL_EINVAL, "federated rank ", federated_rank, " outside [0, ", sizes.size(), ") (federated_world_size)");
  return topology::communicating_processes(sizes, plan_->hsdp, federated_rank);
}

void DistributedState::set_default_init_device() {
  require_global("xffl_state_from_env");
  bool meta = false;
  xffl_device_t init = XFFL_DEVICE_CPU;
  // xFFL: with several GPUs every rank initializes for a broadcast (meta_initialization), and only the
  // rank that loads the weights keeps a real device: rank 0 of the FSDP mesh (federated_local_rank 0 in
  // a federated group) or replica_local_rank 0 under HSDP. The others start on the meta device.
  if (device_type_ == XFFL_DEVICE_CUDA && device_count_ > 1 && plan_) {
    meta = true;
    const bool federated = layout_ == Layout::Federated;
    const bool fsdp = plan_->fsdp_mesh.has_value(), hsdp = plan_->hsdp_mesh.has_value();
    if ((federated && fsdp && plan_->federated_local_rank != 0) || (!federated && fsdp && rank_ != 0) ||
        (hsdp && plan_->replica_local_rank != 0))
      init = XFFL_DEVICE_META;
  }
  set_init_device(init, meta);
}

void DistributedState::set_option_string(xffl_option_t option, const std::string &text) {
  require_settable(option);
  options_.set_string(option, text);
}

void DistributedState::unset_fsdp() {
  require_layout(Layout::Fsdp, "xffl_unset_fsdp");
  clear_layout("xffl_unset_fsdp");
}

void DistributedState::unset_hsdp() {
  require_layout(Layout::Hsdp, "xffl_unset_hsdp");
  clear_layout("xffl_unset_hsdp");
}

void DistributedState::unset_federated_scaling() {
  require_layout(Layout::Federated, "xffl_unset_federated_scaling");
  clear_layout("xffl_unset_federated_scaling");
}

void *DistributedState::stream(int index) const {
  require_global("xffl_get_stream");
  if (index < 0 || index >= streams_) fail(XFFL_EINVAL, "stream index ", index, " outside [0, ", streams_, ")");
  if (device_type_ != XFFL_DEVICE_CUDA) fail(XFFL_EUNSUPPORTED, "streams exist only for cuda execution");
  return backend_->stream(index);
}

const std::string &DistributedState::master_addr() const {
  if (!is_global_setup()) fail(XFFL_ENOTSET, "master address is not set (call xffl_set_global)");
  return master_addr_;
}

fields::Source DistributedState::field_source(std::vector<int> &live) const {
  fields::Source source;
  source.global = is_global_setup();
  source.backend = backend_kind_;
  source.device_type = device_type_;
  source.master_addr = &master_addr_;
  source.master_port = master_port_;
  source.rank = rank_;
  source.world_size = world_size_;
  source.node = node_ ? &*node_ : nullptr;
  source.plan = plan_ ? &*plan_ : nullptr;
  source.current_device = current_device_;
  source.device_count = device_count_;
  source.streams = streams_;
  source.init_device = init_device_;
  source.meta_initialization = meta_initialization_;
  if (layout_ == Layout::Federated && facility_rounds_) {
    // The federation's: the committed round's epoch, number and contributing facilities.
    // A copy: a nonblocking average's request may commit a round meanwhile, on its own thread.
    FacilityRounds::Progress progress = facility_rounds_->progress();
    source.federation_epoch = static_cast<int>(std::min<int64_t>(progress.epoch, std::numeric_limits<int>::max()));
    source.federation_round = static_cast<int>(std::min<int64_t>(progress.round, std::numeric_limits<int>::max()));
    live = std::move(progress.live);
    source.live_facilities = &live;
  } else if (layout_ == Layout::Federated) {
    const int64_t rounds = completed_averages_->load();
    source.federation_epoch = 0;  // every facility takes part in single-world mode
    source.federation_round = static_cast<int>(std::min<int64_t>(rounds, std::numeric_limits<int>::max()));
    source.live_facilities = &live_facilities_;
  }
  return source;
}

int DistributedState::get_int(xffl_attr_t attr) const {
  std::vector<int> live;
  return fields::get_int(field_source(live), attr);
}

std::vector<int> DistributedState::get_ints(xffl_attr_t attr) const {
  std::vector<int> live;
  return fields::get_ints(field_source(live), attr);
}

void DistributedState::check_quorum(int facilities, const char *call) const {
  if (options_.federation_quorum > facilities)
    fail(XFFL_EINVAL, call, ": XFFL_OPT_FEDERATION_QUORUM ", options_.federation_quorum, " exceeds the ", facilities,
         " facilities of the layout");
}

xffl_group *DistributedState::group(xffl_group_kind_t kind, int instance) const {
  if (kind < XFFL_GROUP_WORLD || kind > XFFL_GROUP_FEDERATION)
    fail(XFFL_EINVAL, "unknown group kind ", static_cast<int>(kind));
  const auto &instances = groups_[static_cast<size_t>(kind)];
  if (instance < 0) fail(XFFL_EINVAL, "group instance ", instance, " must not be negative");
  if (instances.empty()) {
    if (!is_global_setup()) fail(XFFL_ENOTSET, "the ", group_kind_name(kind), " group is not set (call xffl_set_global)");
    fail(XFFL_ENOTSET, "the ", group_kind_name(kind), " group is not set in the current layout (",
         layout_ == Layout::None ? "none" : layout_call(layout_), ")");
  }
  if (static_cast<size_t>(instance) >= instances.size())
    fail(XFFL_EINVAL, "group instance ", instance, " outside [0, ", instances.size(), ") for the ",
         group_kind_name(kind), " group (streams = ", streams_, ")");
  return instances[static_cast<size_t>(instance)].get();
}

std::unique_ptr<xffl_group> DistributedState::create_process_group(const std::vector<int> &ranks,
                                                                   const std::string &description) {
  require_global("xffl_create_process_group");
  const std::vector<int> sorted = topology::sorted_rank_set(world_size_, ranks, "process group");
  // The group's rank order is the sorted order (torch's new_group), so members may list it in any order.
  auto members = topology::RankList::explicit_ranks(sorted);
  const int my_index = members.index_of(rank_);
  if (my_index < 0)
    fail(XFFL_EINVAL, "rank ", rank_, " is not a member of the process group it creates (only members call it)");
  if (facility_)
    for (int member : sorted)
      if (!facility_->holds(member))
        fail(XFFL_EUNSUPPORTED, "process group '", description, "' holds rank ", member, " of another facility; in ",
             "facility mode (XFFL_FACILITY=", facility_->facility(), ", ranks ", facility_->offset(), " to ",
             facility_->offset() + facility_->size() - 1, " here) only the federated groups cross facilities");
  uint32_t &made = custom_group_counts_[sorted];
  comm::GroupIdentity identity;
  try {
    identity = backend_->claim_group(sorted, made);
  } catch (const Error &error) {
    throw Error(error.status(), std::string(error.what()) + " (making process group '" + description + "')");
  }
  ++made;
  comm::GroupSpec spec{std::move(members), my_index, description, kCustomTagBase + identity.slot};
  spec.serial = identity.serial;
  spec.crosses_facilities = spans_federated_groups(sorted);
  return std::make_unique<xffl_group>(std::move(spec), backend_, call_gate_, identity.slot);
}

bool DistributedState::spans_federated_groups(const std::vector<int> &sorted_ranks) const {
  if (layout_ != Layout::Federated) return false;
  const std::vector<int> &sizes = *plan_->federated_local_size;
  int end = 0;  // of the federated group holding the first rank
  for (int size : sizes) {
    end += size;
    if (sorted_ranks.front() < end) break;
  }
  return sorted_ranks.back() >= end;
}

const topology::Mesh &DistributedState::mesh(xffl_mesh_kind_t kind) const {
  if (kind != XFFL_MESH_FSDP && kind != XFFL_MESH_HSDP) fail(XFFL_EINVAL, "unknown mesh kind ", static_cast<int>(kind));
  const char *name = fields::find(kind)->name;
  if (!plan_) fail(XFFL_ENOTSET, name, " is not set");
  const std::optional<topology::Mesh> &mesh = kind == XFFL_MESH_FSDP ? plan_->fsdp_mesh : plan_->hsdp_mesh;
  if (!mesh) fail(XFFL_ENOTSET, name, " is not set");
  return *mesh;
}

void DistributedState::set_federated_weights(const std::vector<double> &weights) {
  require_layout(Layout::Federated, "xffl_set_federated_weights");
  if (weights.empty()) {
    federated_weights_.clear();
    return;
  }
  const int groups = *plan_->federated_world_size;
  if (static_cast<int>(weights.size()) != groups)
    fail(XFFL_EINVAL, "federated weights: ", weights.size(), " values for ", groups, " federated groups");
  double sum = 0;
  for (size_t i = 0; i < weights.size(); ++i) {
    if (!std::isfinite(weights[i]) || weights[i] < 0)
      fail(XFFL_EINVAL, "federated weight ", weights[i], " of group ", i, " must be finite and non-negative");
    sum += weights[i];
  }
  if (!(sum > 0) || !std::isfinite(sum)) fail(XFFL_EINVAL, "federated weights sum to ", sum, "; it must be positive and finite");
  federated_weights_ = weights;
}

}  // namespace xffl
