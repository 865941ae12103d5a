#include "bootstrap/store.h"

#include "bootstrap/group_registry.h"

#include "bootstrap/store_client.h"
#include "bootstrap/store_server.h"
#include "bootstrap/text.h"
#include "common/error.h"

namespace xffl::bootstrap {

namespace {

void check_config(const StoreConfig &config) {
  const std::string who = "rank " + std::to_string(config.rank);
  if (config.world_size < 1) fail(XFFL_EINVAL, who, ": world size ", config.world_size, " must be at least 1");
  if (config.rank < 0 || config.rank >= config.world_size)
    fail(XFFL_EINVAL, "rank ", config.rank, " is outside [0, ", config.world_size, ")");
  if (config.master_addr.empty()) fail(XFFL_EINVAL, who, ": the store's address (master_addr) is empty");
  const int lowest_port = config.rank == 0 ? 0 : 1;
  if (config.master_port < lowest_port || config.master_port > 65535)
    fail(XFFL_EINVAL, who, ": store port ", config.master_port, " is outside [", lowest_port, ", 65535]");
  if (config.job_id.size() > wire::kMaxJobId)
    fail(XFFL_EINVAL, who, ": job id of ", config.job_id.size(), " bytes exceeds the limit of ", wire::kMaxJobId);
  if (config.timeout_ms < 1) fail(XFFL_EINVAL, who, ": timeout ", config.timeout_ms, " ms must be at least 1");
  if (config.hello_timeout_ms < 1)
    fail(XFFL_EINVAL, who, ": hello timeout ", config.hello_timeout_ms, " ms must be at least 1");
  if (config.close_linger_ms < 0)
    fail(XFFL_EINVAL, who, ": close linger ", config.close_linger_ms, " ms is negative");
}

}  // namespace

Store::Store(StoreConfig config) : config_(std::move(config)) {
  check_config(config_);
  config_.logger = config_.logger.with_rank(config_.rank);
  port_ = config_.master_port;
  if (config_.rank == 0) {
    ServerConfig server;
    server.world_size = config_.world_size;
    server.job_id = config_.job_id;
    server.auth_token = config_.auth_token;
    server.hello_timeout_ms = config_.hello_timeout_ms;
    server.logger = config_.logger;
    const std::string &bind = config_.bind_addr.empty() ? config_.master_addr : config_.bind_addr;
    try {
      server_ = std::make_unique<StoreServer>(std::move(server), bind, config_.master_port,
                                              std::chrono::milliseconds(config_.timeout_ms), config_.server_tap,
                                              config_.master_addr);
    } catch (const Error &error) {
      throw Error(error.status(), "rank 0: " + std::string(error.what()));
    }
    port_ = server_->port();
    config_.logger.info("serving the store at ", server_->address(), " for ", config_.world_size, " ranks");
  }
  address_ = host_port(config_.master_addr, port_);

  ClientConfig client;
  client.host = config_.master_addr;
  client.port = port_;
  client.rank = config_.rank;
  client.world_size = config_.world_size;
  client.job_id = config_.job_id;
  client.auth_token = config_.auth_token;
  client.timeout_ms = config_.timeout_ms;
  client.logger = config_.logger;
  client.tap = config_.client_tap;
  client_ = std::make_unique<StoreClient>(std::move(client));  // on failure, server_ stops with this object
}

Store::~Store() {
  try {
    close();
  } catch (...) {  // a destructor reports nothing; close() itself only logs
  }
}

StoreClient &Store::client(const char *operation) {
  if (!client_)
    fail(XFFL_ESTATE, "rank ", config_.rank, ": cannot ", operation, ": the store connection to ", address_,
         " was closed");
  return *client_;
}

void Store::publish(const std::string &key, const std::vector<uint8_t> &value) {
  std::lock_guard<std::mutex> hold(request_mutex_);
  client("publish").publish(key, value);
}

std::vector<uint8_t> Store::fetch(const std::string &key, int timeout_ms) {
  std::lock_guard<std::mutex> hold(request_mutex_);
  return client("fetch").fetch(key, timeout_ms);
}

std::vector<int> Store::departed_ranks(int timeout_ms) {
  std::lock_guard<std::mutex> hold(request_mutex_);
  return client("ask which ranks left").departed_ranks(timeout_ms);
}

comm::GroupIdentity Store::claim_group(const std::vector<int> &sorted_members, uint32_t creation, int timeout_ms) {
  const std::string key = GroupRegistry::key(sorted_members, creation);
  std::lock_guard<std::mutex> hold(request_mutex_);
  protocol::Identity identity = client("ask for a process group's identity")
                                    .claim_group(std::vector<uint8_t>(key.begin(), key.end()),
                                                 static_cast<uint32_t>(sorted_members.size()), timeout_ms);
  if (identity.slot >= GroupRegistry::kDefaultSlots)
    fail(XFFL_ENETWORK, "rank ", config_.rank, ": the store at ", address_, " gave process-group slot ", identity.slot,
         ", outside [0, ", GroupRegistry::kDefaultSlots, ")");
  return comm::GroupIdentity{identity.slot, identity.serial};
}

void Store::release_group(uint32_t slot) noexcept {
  constexpr int kReleaseSendMs = 100;  // one small frame into the socket buffer; never waits on a peer
  std::unique_lock<std::mutex> hold(request_mutex_, std::try_to_lock);
  if (!hold.owns_lock() || closed_ || !client_) return;
  client_->release_group(slot, kReleaseSendMs);
}

void Store::barrier(const std::string &name) { barrier(name, config_.timeout_ms); }

void Store::barrier(const std::string &name, int timeout_ms) {
  std::lock_guard<std::mutex> hold(request_mutex_);
  StoreClient &connection = client("enter a barrier");
  // The n-th use of a name on every rank forms one barrier, so a name can be reused in a loop.
  uint64_t generation = barrier_generation_[name]++;
  connection.barrier(name + "#" + std::to_string(generation), name, timeout_ms);
}

void Store::close() {
  std::lock_guard<std::mutex> closing(close_mutex_);
  if (closed_) return;
  closed_ = true;
  if (client_) client_->interrupt();  // wakes a request blocked in another thread
  {
    std::lock_guard<std::mutex> hold(request_mutex_);
    client_.reset();
  }
  if (server_) {
    if (!server_->wait_until_no_ranks(config_.close_linger_ms))
      config_.logger.warn("closing the store at ", server_->address(), " while ranks are still connected (waited ",
                          config_.close_linger_ms, " ms)");
    server_->stop();
    server_.reset();
  }
}

}  // namespace xffl::bootstrap
