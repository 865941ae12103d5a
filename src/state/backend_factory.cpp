#include "state/backend_factory.h"

#include <utility>

#include "bootstrap/pmix_store.h"
#include "bootstrap/store.h"
#include "comm/local_backend.h"
#include "common/error.h"
#include "common/log.h"
#ifdef XFFL_HAVE_UCX
#include "comm/ucx/ucx_backend.h"
#endif
#ifdef XFFL_HAVE_NCCL
#include "comm/nccl/nccl_api.h"
#include "comm/nccl/nccl_backend.h"
#endif

namespace xffl {

namespace {

[[maybe_unused]] std::unique_ptr<bootstrap::Store> open_store(const GlobalConfig &config, const Options &options,
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
  return std::make_unique<bootstrap::Store>(store_config);
}

#ifdef XFFL_HAVE_UCX
// Owns the store together with the UCX backend: endpoints are made lazily from addresses in the store,
// so the store lives as long as any group (groups share ownership of their backend).
class StoreBackedUcx final : public comm::Backend {
 public:
  StoreBackedUcx(std::shared_ptr<bootstrap::Store> store, std::unique_ptr<comm::UcxBackend> ucx)
      : store_(std::move(store)), ucx_(std::move(ucx)) {}
  ~StoreBackedUcx() override {
    ucx_.reset();  // the backend before the exchange it reads from
    store_.reset();
  }
  xffl_backend_t kind() const override { return XFFL_BACKEND_UCX; }
  std::unique_ptr<comm::Communicator> create_communicator(const comm::GroupSpec &group) override {
    return ucx_->create_communicator(group);
  }
  comm::GroupIdentity claim_group(const std::vector<int> &sorted_members, uint32_t creation) override {
    return ucx_->claim_group(sorted_members, creation);
  }
  void release_group(uint32_t slot) noexcept override { ucx_->release_group(slot); }
  comm::UcxBackend &ucx() { return *ucx_; }

 private:
  std::shared_ptr<bootstrap::Store> store_;
  std::unique_ptr<comm::UcxBackend> ucx_;
};

std::shared_ptr<StoreBackedUcx> make_ucx(std::shared_ptr<bootstrap::Store> store, const GlobalConfig &config,
                                         const Options &options, const Logger &logger) {
  PhaseTimer timer(logger, "ucx bring-up");
  auto ucx = std::make_unique<comm::UcxBackend>(config.rank, config.world_size, *store, options.timeout_ms,
                                                options.log_level, options.ucx_process_settings);
  return std::make_shared<StoreBackedUcx>(std::move(store), std::move(ucx));
}
#endif

#ifdef XFFL_HAVE_NCCL
comm::NcclBackend *as_nccl(comm::Backend &backend) { return dynamic_cast<comm::NcclBackend *>(&backend); }
#endif

}  // namespace

std::shared_ptr<comm::Backend> make_backend(const GlobalConfig &config, const Options &options) {
  const Logger logger(options.log_level, config.rank);
  switch (config.backend) {
    case XFFL_BACKEND_NONE: return std::make_shared<comm::LocalBackend>();
    case XFFL_BACKEND_UCX: {
#ifdef XFFL_HAVE_UCX
      comm::UcxBackend::load_ucx();
      std::shared_ptr<bootstrap::Store> store = open_store(config, options, logger);
      auto ucx = make_ucx(store, config, options, logger);
      store->barrier("xffl/set_global");
      return ucx;
#else
      fail(XFFL_EUNSUPPORTED, "backend ucx: this build of xffl has no UCX support");
#endif
    }
    case XFFL_BACKEND_NCCL: {
#ifdef XFFL_HAVE_NCCL
#ifdef XFFL_HAVE_UCX
      if (options.cross_facility_backend == XFFL_BACKEND_UCX) comm::UcxBackend::load_ucx();
#endif
      std::shared_ptr<bootstrap::Store> store = open_store(config, options, logger);
      std::shared_ptr<comm::NcclBackend> nccl;
      {
        PhaseTimer timer(logger, "nccl bring-up");
        nccl = std::make_shared<comm::NcclBackend>(comm::nccl::real_nccl_api(), store, config.rank,
                                                   config.world_size, options.timeout_ms);
      }
      if (options.cross_facility_backend == XFFL_BACKEND_UCX) {
#ifdef XFFL_HAVE_UCX
        nccl->set_crossing_backend(make_ucx(store, config, options, logger));
        store->barrier("xffl/set_global");
#else
        fail(XFFL_EUNSUPPORTED, "cross-facility backend ucx: this build of xffl has no UCX support");
#endif
      }
      return nccl;
#else
      fail(XFFL_EUNSUPPORTED, "backend nccl: this build of xffl has no CUDA and NCCL support");
#endif
    }
  }
  fail(XFFL_EINVAL, "backend ", static_cast<int>(config.backend), " is not XFFL_BACKEND_NONE, UCX or NCCL");
}

void apply_options(comm::Backend &backend, const Options &options) {
#ifdef XFFL_HAVE_UCX
  if (auto *ucx = dynamic_cast<StoreBackedUcx *>(&backend)) {
    ucx->ucx().set_timeout_ms(options.timeout_ms);
    ucx->ucx().set_log_level(options.log_level);
  }
#endif
#ifdef XFFL_HAVE_NCCL
  if (auto *nccl = as_nccl(backend)) {
    nccl->set_timeout_ms(options.timeout_ms);
    nccl->set_stream_ordered(options.enqueue_only);
    if (nccl->crossing_backend()) apply_options(*nccl->crossing_backend(), options);
  }
#endif
  (void)backend;
  (void)options;
}

void register_world_group(comm::Backend &backend, const comm::GroupSpec &world) {
#ifdef XFFL_HAVE_NCCL
  if (auto *nccl = as_nccl(backend)) nccl->register_world(world);
#endif
  (void)backend;
  (void)world;
}

bool prepare_family_group(comm::Backend &backend, const comm::GroupSpec &group, int instance) {
#ifdef XFFL_HAVE_NCCL
  if (auto *nccl = as_nccl(backend)) {
    nccl->prepare_family(group, instance);
    return true;
  }
#endif
  (void)backend;
  (void)group;
  (void)instance;
  return false;
}

void note_node_place(comm::Backend &backend, int node_local_rank, int node_local_size) {
#ifdef XFFL_HAVE_NCCL
  if (auto *nccl = as_nccl(backend)) nccl->set_node_place(node_local_rank, node_local_size);
#endif
  (void)backend;
  (void)node_local_rank;
  (void)node_local_size;
}

std::pair<int, int> select_cuda_device(comm::Backend &backend, int device_index, int node_local_rank, int streams) {
#ifdef XFFL_HAVE_NCCL
  if (auto *nccl = as_nccl(backend)) {
    nccl->select_device(device_index, node_local_rank, streams);
    return {nccl->device(), nccl->device_count()};
  }
#endif
  (void)backend;
  (void)device_index;
  (void)node_local_rank;
  (void)streams;
  fail(XFFL_EUNSUPPORTED, "cuda execution needs the NCCL backend");
}

void *exec_stream(comm::Backend &backend, int index) {
#ifdef XFFL_HAVE_NCCL
  if (auto *nccl = as_nccl(backend)) return nccl->stream(index);
#endif
  (void)backend;
  (void)index;
  fail(XFFL_EUNSUPPORTED, "streams exist only for cuda execution (backend nccl)");
}

}  // namespace xffl
