// The C++ DistributedState: validates calls in order, owns the groups of the current layout, and
// drives the backend. Mirrors xFFL's Python DistributedState; see DESIGN.md sections 2 and 3.
#ifndef XFFL_SRC_STATE_DISTRIBUTED_STATE_H
#define XFFL_SRC_STATE_DISTRIBUTED_STATE_H

#include <array>
#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "comm/communicator.h"
#include "federated/registry.h"
#include "federated/strategy.h"
#include "federated/wire/error_feedback.h"
#include "federated/wire/hop_scratch.h"
#include "state/call_gate.h"
#include "state/facility_link.h"
#include "state/facility_rounds.h"
#include "state/group.h"
#include "state/options.h"
#include "state/request.h"
#include "topology/plan.h"

namespace xffl {

enum class Layout { None, Fsdp, Hsdp, Federated };

namespace fields {
struct Source;
}

struct NodeInfo {
  int local_rank = 0, local_size = 0, rank = 0, world_size = 0;
};

// One federated average under XFFL_FACILITY_FAULTS_CONTINUE in facility mode, as the calling thread
// checked and placed it (DistributedState::continuing_average): run() is the round protocol, on the
// calling thread (the blocking averages) or on a request's (the nonblocking ones). It borrows the
// state's FacilityRounds, residuals and scratch: the state's gate must be held until run() returns,
// and the state outlives it (its destroy waits for a request's run).
struct ContinuingAverage {
  FacilityRounds *rounds = nullptr;
  FacilityRounds::Placement placement;

  void run(void *const *bufs, const size_t *counts, size_t n, xffl_dtype_t dtype) const {
    rounds->average(placement, bufs, counts, n, dtype);
  }
};

class DistributedState {
 public:
  DistributedState();
  ~DistributedState();
  DistributedState(const DistributedState &) = delete;
  DistributedState &operator=(const DistributedState &) = delete;

  // store_address_from_pmix: master_addr is empty and PMIx supplies the store's address
  // (bootstrap/pmix_store.h); master_addr() then answers "pmix".
  // Facility mode (XFFL_FACILITY and XFFL_FEDERATION set; state/facility_link.h): rank and world_size
  // are the job's; the state then holds the global rank O_i + rank and the global world size W, and the
  // WORLD group is the job's ranks (global O_i .. O_i + F_i - 1).
  void set_global(xffl_backend_t backend, xffl_device_t device_type, const std::string &master_addr, int master_port,
                  int rank, int world_size, bool store_address_from_pmix = false);
  void set_node(int local_rank, int local_size, int node_rank, int node_world_size);
  void set_exec_device(int device_index, int streams);
  void set_init_device(xffl_device_t init_device, bool meta_initialization);
  void set_fsdp();
  // FSDP over a caller's 1-D mesh (xFFL's set_fsdp(mesh)); sorted, as torch's new_group orders ranks.
  void set_fsdp_mesh(const std::vector<int> &ranks);
  void set_hsdp(int hsdp);
  // xFFL's _partial_hsdp_setup_manual, validated, completed into the HSDP layout of set_hsdp.
  void set_hsdp_manual(int replica_local_rank, int replica_local_size, int replica_rank,
                       const std::vector<int> &replica_world_size);
  void federated_scaling(const std::vector<int> &sizes, int hsdp);
  void unset_fsdp();
  void unset_hsdp();
  void unset_federated_scaling();

  bool is_global_setup() const { return backend_ != nullptr; }
  bool is_node_setup() const { return node_.has_value(); }
  bool is_fsdp_setup() const { return plan_ && plan_->fsdp_mesh.has_value(); }
  bool is_hsdp_setup() const { return plan_ && plan_->hsdp_mesh.has_value(); }
  bool is_federated_scaling_setup() const { return layout_ == Layout::Federated; }

  int get_int(xffl_attr_t attr) const;
  std::vector<int> get_ints(xffl_attr_t attr) const;
  const std::string &master_addr() const;

  void set_option(xffl_option_t option, int value);
  void set_option_string(xffl_option_t option, const std::string &text);
  const Options &options() const { return options_; }
  // Facility mode's link to the federation (state/facility_link.h); null when one job is the whole
  // federation, or before xffl_set_global. A federation coordinator starts from it.
  const std::shared_ptr<FacilityLink> &facility_link() const { return facility_; }

  // The senders C_g of federated group g (xFFL's _get_communicating_processes). XFFL_ESTATE without
  // federated scaling, XFFL_EINVAL for g outside [0, G).
  std::vector<int> communicating_processes(int federated_rank) const;
  // xFFL's _get_init_device, as its setup calls it after the layout: CPU without meta initialization,
  // unless CUDA execution sees more than one device; then meta initialization, and the meta device on
  // every rank that does not load the weights (see the definition).
  void set_default_init_device();

  xffl_group *group(xffl_group_kind_t kind, int instance) const;
  std::unique_ptr<xffl_group> create_process_group(const std::vector<int> &ranks, const std::string &description);
  const topology::Mesh &mesh(xffl_mesh_kind_t kind) const;

  std::string describe(xffl_format_t format) const;

  // Taken by every exported function on this state or its groups (call_gate.h).
  CallGate &call_gate() const { return *call_gate_; }
  // The same gate, for a request that may outlive the state (state/request.h).
  std::shared_ptr<CallGate> shared_call_gate() const { return call_gate_; }
  // The request in flight on this state (it holds the gate): destroying the state first waits for its
  // run to end, bounded as the blocking call is, so the backend is idle when it goes.
  void track_request(const std::shared_ptr<Request> &request) { in_flight_ = request; }

  // The federation's progress (XFFL_ATTR_FEDERATION_EPOCH, _ROUND, XFFL_ATTR_LIVE_FACILITIES; rows of
  // the field table that describe() does not print, as they are not xFFL's fields). In single-world
  // mode the epoch is 0, the round counts the federated averages completed on this layout and every
  // facility is live.
  // The counter of completed averages of the current layout: a nonblocking average's request holds it
  // and adds one when its run succeeds (a new layout gets a new counter).
  std::shared_ptr<std::atomic<int64_t>> completed_averages() const { return completed_averages_; }

  // FedAvg weights per federated group; empty means the plain mean.
  void set_federated_weights(const std::vector<double> &weights);
  const std::vector<double> &federated_weights() const { return federated_weights_; }
  // The strategy of XFFL_OPT_FEDERATED_STRATEGY with this rank's roles in it (federated/strategy.h).
  // XFFL_ESTATE without federated scaling; XFFL_EINVAL for a host stream or a layout the strategy
  // refuses (FLAT over unequal federated groups).
  federated::Averaging federated_averaging(void *stream) const;
  // The strategies XFFL_OPT_FEDERATED_STRATEGY picks from: the built-in ones, and any a test adds.
  federated::StrategyTable &federated_strategies() { return federated_strategies_; }
  // Facility mode with XFFL_FACILITY_FAULTS_CONTINUE: the federated averages go through the round
  // protocol (state/facility_rounds.h) instead of the strategy.
  bool continues_facility_faults() const { return facility_rounds_ != nullptr; }
  // One federated average of that mode, checked and placed on the calling thread: XFFL_ESTATE without
  // federated scaling; XFFL_EUNSUPPORTED, before any message, for what it does not carry (device
  // memory, a strategy other than HIERARCHICAL, or FLAT with HSDP); XFFL_EINVAL for weights over
  // integer data. Its run() may go on another thread (a nonblocking average's request) while the
  // state's gate is held for it.
  ContinuingAverage continuing_average(xffl_dtype_t dtype, void *stream) const;
  // The blocking federated average of that mode (one buffer: n = 1): continuing_average, then its run
  // here, which throws what FacilityRounds::average throws.
  void federated_average_continuing(void *const *bufs, const size_t *counts, size_t n, xffl_dtype_t dtype,
                                    void *stream);
  // The execution device's stream `index` (a cudaStream_t); CUDA only.
  void *stream(int index) const;

 private:
  // XFFL_EINVAL when XFFL_OPT_FEDERATION_QUORUM exceeds the `facilities` of the layout.
  void check_quorum(int facilities, const char *call) const;
  // This state as the field table reads it (state/fields.h); `live` holds what its live_facilities
  // points to, so it must outlive the source.
  fields::Source field_source(std::vector<int> &live) const;
  void require_global(const char *call) const;
  // XFFL_ESTATE for an option xffl_set_global read, once it was called.
  void require_settable(xffl_option_t option) const;
  void require_no_layout(const char *call) const;
  void require_layout(Layout layout, const char *call) const;
  void install_layout(Layout layout, topology::RankPlan plan);
  void clear_layout(const char *ending_call);
  void add_group(xffl_group_kind_t kind, int instances, const topology::RankList &members,
                 const std::string &description);
  // Facility mode: XFFL_EUNSUPPORTED naming the first group of the plan (other than the federated
  // ones) that holds a rank of another facility; nothing when one job is the whole federation.
  void check_inside_facility(const topology::RankPlan &plan) const;
  // The job's world size: the facility's in facility mode, else the world's.
  int job_world_size() const { return facility_ ? facility_->size() : world_size_; }
  // Under federated scaling: whether these ranks (sorted) lie in more than one federated group.
  bool spans_federated_groups(const std::vector<int> &sorted_ranks) const;

  std::shared_ptr<CallGate> call_gate_ = std::make_shared<CallGate>();  // shared with every group
  Options options_;
  std::shared_ptr<comm::Backend> backend_;
  std::shared_ptr<FacilityLink> facility_;  // facility mode only
  std::unique_ptr<FacilityRounds> facility_rounds_;  // facility mode with XFFL_FACILITY_FAULTS_CONTINUE only
  xffl_backend_t backend_kind_ = XFFL_BACKEND_NONE;
  xffl_device_t device_type_ = XFFL_DEVICE_CPU;
  std::string master_addr_;
  int master_port_ = 0;
  int rank_ = 0;
  int world_size_ = 0;
  std::optional<NodeInfo> node_;
  std::optional<int> current_device_;
  int device_count_ = 0;
  int streams_ = 1;
  std::optional<xffl_device_t> init_device_;
  std::optional<bool> meta_initialization_;

  Layout layout_ = Layout::None;
  unsigned layout_generation_ = 0;  // advances identically on every rank: part of each group's tag
  std::optional<topology::RankPlan> plan_;
  // Groups by xffl_group_kind_t, then instance. WORLD lives from set_global; the rest with the layout.
  std::array<std::vector<std::unique_ptr<xffl_group>>, 7> groups_;
  // Groups of layouts that were unset: ended, kept as shells until the state is destroyed so that a
  // borrowed handle used after its layout fails with XFFL_ESTATE (Group::retire).
  std::vector<std::unique_ptr<xffl_group>> retired_groups_;
  // Groups made so far from each sorted member list (xffl_create_process_group): members make the
  // groups of one list in the same order, so the count names the same group on every member.
  std::map<std::vector<int>, uint32_t> custom_group_counts_;
  std::vector<double> federated_weights_;
  std::vector<int> live_facilities_;  // under federated scaling: every federated group (single-world mode)
  std::shared_ptr<std::atomic<int64_t>> completed_averages_ = std::make_shared<std::atomic<int64_t>>(0);
  federated::StrategyTable federated_strategies_;
  std::weak_ptr<Request> in_flight_;  // the last request started; expired once freed
  // The residuals of XFFL_OPT_ERROR_FEEDBACK, kept between averages (a pointer: averaging is const).
  std::unique_ptr<federated::wire::ErrorFeedback> error_feedback_ = std::make_unique<federated::wire::ErrorFeedback>();
  // The compressed hop's bytes, kept between averages; given back with the layout.
  std::unique_ptr<federated::wire::HopScratch> hop_scratch_ = std::make_unique<federated::wire::HopScratch>();
};

}  // namespace xffl

struct xffl_state final : xffl::DistributedState {};

#endif
