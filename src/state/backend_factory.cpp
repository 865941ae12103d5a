#include "state/backend_factory.h"

#include <utility>

#include "common/log.h"
#include "bootstrap/store.h"
#include "comm/local_backend.h"
#include "common/error.h"
#ifdef XFFL_HAVE_UCX
#include "comm/ucx/ucx_backend.h"
#endif

namespace xffl {

namespace {

#ifdef XFFL_HAVE_UCX
// Owns the store together with the UCX backend: endpoints are made lazily from addresses in the store,
// so the store lives as long as any group (groups share ownership of their backend).
class StoreBackedUcx final : public comm::Backend {
 public:
  StoreBackedUcx(std::unique_ptr<bootstrap::Store> store, std::unique_ptr<comm::UcxBackend> ucx)
      : store_(std::move(store)), ucx_(std::move(ucx)) {}
  ~StoreBackedUcx() override {
    ucx_.reset();  // the backend before the exchange it reads from
    store_.reset();
  }
  xffl_backend_t kind() const override { return XFFL_BACKEND_UCX; }
  std::unique_ptr<comm::Communicator> create_communicator(const comm::GroupSpec &group) override {
    return ucx_->create_communicator(group);
  }
  comm::UcxBackend &ucx() { return *ucx_; }

 private:
  std::unique_ptr<bootstrap::Store> store_;
  std::unique_ptr<comm::UcxBackend> ucx_;
};
#endif

}  // namespace

std::shared_ptr<comm::Backend> make_backend(const GlobalConfig &config, const Options &options) {
  switch (config.backend) {
    case XFFL_BACKEND_NONE: return std::make_shared<comm::LocalBackend>();
    case XFFL_BACKEND_UCX: {
#ifdef XFFL_HAVE_UCX
      Logger logger(options.log_level, config.rank);
      bootstrap::StoreConfig store_config;
      store_config.master_addr = config.master_addr;
      store_config.master_port = config.master_port;
      store_config.rank = config.rank;
      store_config.world_size = config.world_size;
      store_config.job_id = options.job_id;
      store_config.auth_token = options.auth_token;
      store_config.timeout_ms = options.timeout_ms;
      store_config.logger = logger;
      std::unique_ptr<bootstrap::Store> store;
      {
        PhaseTimer timer(logger, "rendezvous");
        store = std::make_unique<bootstrap::Store>(store_config);
      }
      PhaseTimer timer(logger, "ucx bring-up");
      auto ucx = std::make_unique<comm::UcxBackend>(config.rank, config.world_size, *store, options.timeout_ms,
                                                    options.log_level);
      store->barrier("xffl/set_global");
      return std::make_shared<StoreBackedUcx>(std::move(store), std::move(ucx));
#else
      fail(XFFL_EUNSUPPORTED, "backend ucx: this build of xffl has no UCX support");
#endif
    }
    case XFFL_BACKEND_NCCL:
      fail(XFFL_EUNSUPPORTED, "backend nccl: this build of xffl has no CUDA and NCCL support");
  }
  fail(XFFL_EINVAL, "backend ", static_cast<int>(config.backend), " is not XFFL_BACKEND_NONE, UCX or NCCL");
}

void apply_options(comm::Backend &backend, const Options &options) {
#ifdef XFFL_HAVE_UCX
  if (auto *ucx = dynamic_cast<StoreBackedUcx *>(&backend)) {
    ucx->ucx().set_timeout_ms(options.timeout_ms);
    ucx->ucx().set_log_level(options.log_level);
  }
#else
  (void)backend;
  (void)options;
#endif
}

}  // namespace xffl
