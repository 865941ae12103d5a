#include "state/backend_factory.h"

#include <optional>
#include <string>

#include "bootstrap/pmix_store.h"
#include "comm/backend_names.h"
#include "bootstrap/store.h"
#include "common/error.h"
#include "common/log.h"
#include "state/facility_backend.h"

namespace xffl {

namespace {

std::shared_ptr<bootstrap::Store> open_store(const GlobalConfig &config, const Options &options,
                                             const Logger &logger) {
  bootstrap::StoreConfig store_config;
  store_config.master_addr = config.master_addr;
  store_config.master_port = config.master_port;
  store_config.rank = config.rank;
  store_config.world_size = config.world_size;
  store_config.job_id = options.job_id;
  store_config.auth_token = options.auth_token;
  store_config.timeout_ms = options.timeout_ms;
  store_config.logger = logger;
  PhaseTimer timer(logger, "rendezvous");
  if (config.store_address_from_pmix) return bootstrap::open_store_through_pmix(std::move(store_config));
  return std::make_shared<bootstrap::Store>(store_config);
}

// The line's maker: XFFL_EUNSUPPORTED in the line's words when this build lacks the backend.
// crossing: the entry is the cross-facility backend (XFFL_OPT_CROSS_FACILITY_BACKEND), not the main one.
const comm::BackendMaker &maker_of(const comm::BackendEntry &entry, bool crossing) {
  if (!entry.maker)
    fail(XFFL_EUNSUPPORTED, crossing ? "cross-facility backend " : "backend ", entry.name, ": ", entry.missing);
  return *entry.maker;
}

std::shared_ptr<comm::Backend> make_one(const comm::BackendEntry &entry, const comm::BackendSetup &setup,
                                        const Logger &logger) {
  std::shared_ptr<comm::Backend> backend;
  {
    // Only bring-ups that communicate are timed (none has nothing to time).
    std::optional<PhaseTimer> timer;
    if (entry.maker->rendezvous) timer.emplace(logger, std::string(entry.name) + " bring-up");
    backend = entry.maker->make(setup);
  }
  if (!backend || backend->kind() != entry.kind || backend->memory_kind() != entry.memory)
    fail(XFFL_EINTERNAL, "backend ", entry.name, ": its maker made a backend that is not what its line says");
  return backend;
}

}  // namespace

const comm::BackendEntry &backend_entry(int kind) {
  if (const comm::BackendEntry *entry = comm::find_backend(kind)) return *entry;
  std::string known;
  for (const comm::BackendEntry &entry : comm::backend_table())
    known += (known.empty() ? "" : ", ") + std::string(entry.name) + " (" + std::to_string(entry.kind) + ")";
  fail(XFFL_EINVAL, "backend ", kind, " is not a known backend: ", known);
}

std::shared_ptr<comm::Backend> make_backend(const GlobalConfig &config, const Options &options,
                                            const std::shared_ptr<FacilityLink> &facility) {
  const Logger logger(options.log_level, config.rank);
  const comm::BackendEntry &entry = backend_entry(config.backend);
  for (const comm::BackendName &name : comm::backend_names())  // before any rank waits for the others
    if (name.kind == entry.kind && !name.main)
      fail(XFFL_EUNSUPPORTED, "backend ", entry.name, " carries only the groups that cross facilities: choose it ",
           "with XFFL_OPT_CROSS_FACILITY_BACKEND (XFFL_CROSS_FACILITY_BACKEND=", entry.name, ") under backend ucx or nccl");
  const comm::BackendMaker &maker = maker_of(entry, false);
  const comm::BackendEntry *crossing = nullptr;
  // Facility mode: only the wan backend reaches other facilities' jobs; it is the default there.
  xffl_backend_t crossing_kind = options.cross_facility_backend;
  if (facility && crossing_kind == XFFL_BACKEND_UCX)
    fail(XFFL_EINVAL, "cross-facility backend ucx (XFFL_CROSS_FACILITY_BACKEND) cannot cross facility jobs: UCX ",
         "reaches only the ranks of its own job; in facility mode (XFFL_FACILITY=", facility->facility(),
         ") the federated groups go over wan, the default there");
  if (facility && crossing_kind == XFFL_BACKEND_NONE) crossing_kind = XFFL_BACKEND_WAN;
  // A crossing backend is always a backend of its own, UCX under UCX too: a context that carries only
  // the crossing groups and sends every message eagerly, which a main UCX context cannot do for them
  // alone (comm/ucx/ucx_settings.h, UcxSettings::crossing; it publishes under keys of its own).
  // XFFL_CROSS_FACILITY_BACKEND=none leaves the crossing groups on the main backend.
  if (maker.takes_crossing && crossing_kind != XFFL_BACKEND_NONE) {
    crossing = &backend_entry(crossing_kind);
    if (crossing->memory != comm::MemoryKind::kHost)  // crossing groups are staged through host memory
      fail(XFFL_EINVAL, "cross-facility backend ", crossing->name, " moves device memory; it must move host memory");
  }
  // Only the wan backend can dial out only; under any other this rank would still have to accept.
  if (options.wan_dial_out && entry.kind != XFFL_BACKEND_NONE && (!crossing || crossing->kind != XFFL_BACKEND_WAN))
    fail(XFFL_EINVAL, "XFFL_WAN_DIAL_OUT=1 needs the wan crossing backend (XFFL_CROSS_FACILITY_BACKEND=wan; the ",
         "default in facility mode): backend ", entry.name, " accepts connections from the other ranks");
  if (!options.wan_relay.empty() && entry.kind != XFFL_BACKEND_NONE && (!crossing || crossing->kind != XFFL_BACKEND_WAN))
    fail(XFFL_EINVAL, "XFFL_WAN_RELAY needs the wan crossing backend (XFFL_CROSS_FACILITY_BACKEND=wan; the ",
         "default in facility mode): backend ", entry.name, " accepts connections from the other ranks");
  // What can fail on this rank alone fails here, before the others wait for it in the rendezvous.
  if (maker.load) maker.load();
  if (crossing && maker_of(*crossing, true).load) crossing->maker->load();

  comm::BackendSetup setup;
  setup.rank = config.rank;
  setup.world_size = config.world_size;
  setup.timeout_ms = options.timeout_ms;
  setup.log_level = options.log_level;
  setup.process_settings = options.ucx_process_settings;
  setup.auth_token = options.auth_token;
  setup.job_id = options.job_id;
  setup.store_host = config.master_addr;
  setup.wan_streams = options.wan_streams;
  setup.wan_encryption = options.wan_encryption;
  setup.wan_bdp_bytes = options.wan_bdp_bytes;
  setup.wan_dial_out = options.wan_dial_out;
  setup.wan_relay = options.wan_relay;
  std::shared_ptr<bootstrap::Store> store;
  if (maker.rendezvous || (crossing && crossing->maker->rendezvous)) {
    store = open_store(config, options, logger);
    setup.exchange = store;
    setup.store_host = store->host();  // under PMIx, master_addr is empty: the store learnt the host
  }
  // Job rank 0 of a facility's job checks the federation once it serves the job's store: when the
  // federation is unreachable or mismatched it fails, and its store goes with it, so the job's other
  // ranks fail at once (the store is gone) instead of running to their own timeout.
  if (facility && config.rank == 0 && crossing) {
    PhaseTimer timer(logger, "federation registration");
    facility->register_facility();
  }
  std::shared_ptr<comm::Backend> backend = make_one(entry, setup, logger);
  if (crossing) {
    comm::BackendSetup crossing_setup = setup;
    crossing_setup.crossing = true;
    if (facility) {  // the crossing backend speaks global ranks and meets through the federation's store
      crossing_setup.rank = facility->global_rank(config.rank);
      crossing_setup.world_size = facility->world_size();
      crossing_setup.exchange = facility->crossing_exchange();
      crossing_setup.store_host = facility->store_host();
      // Under XFFL_FACILITY_FAULTS_CONTINUE every rank publishes its address now, before its facility
      // registers its lease: a facility that returns is admitted as soon as its lease is in, and the
      // survivors' senders must then find its new addresses, not its previous job's.
      crossing_setup.crossing_publishes_lazily = options.facility_faults != XFFL_FACILITY_FAULTS_CONTINUE;
      crossing_setup.crossing_wait_hook = facility->crossing_wait_hook();
    }
    backend->set_crossing_backend(make_one(*crossing, crossing_setup, logger));
  }
  if (maker.barrier || (crossing && crossing->maker->barrier)) store->barrier("xffl/set_global");
  backend->apply(live_settings(options));  // what a constructor does not take (NCCL's completion mode)
  if (facility) return std::make_shared<FacilityBackend>(backend, facility->offset(), facility->size());
  return backend;
}

comm::LiveSettings live_settings(const Options &options) {
  comm::LiveSettings settings;
  settings.timeout_ms = options.timeout_ms;
  settings.log_level = options.log_level;
  settings.stream_ordered = options.enqueue_only;
  return settings;
}

}  // namespace xffl
