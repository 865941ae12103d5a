#include "comm/wan/wan_backend.h"

#include "comm/wan/wan_communicator.h"
#include "common/error.h"

namespace xffl::comm {

namespace {

std::shared_ptr<Backend> make_wan(const BackendSetup &setup) {
  if (!setup.crossing)
    fail(XFFL_EUNSUPPORTED, "backend wan carries only the groups that cross facilities: choose it with ",
         "XFFL_OPT_CROSS_FACILITY_BACKEND (XFFL_CROSS_FACILITY_BACKEND=wan) under backend ucx or nccl");
  if (!setup.exchange) fail(XFFL_EINTERNAL, "wan backend: made without the job's store");
  wan::WanSettings settings;
  settings.rank = setup.rank;
  settings.world_size = setup.world_size;
  settings.timeout_ms = setup.timeout_ms;
  settings.log_level = setup.log_level;
  settings.streams = setup.wan_streams;
  settings.encryption = setup.wan_encryption;
  settings.secret = setup.auth_token;
  settings.job_id = setup.job_id;
  settings.bdp_bytes = setup.wan_bdp_bytes;
  settings.dial_out = setup.wan_dial_out;
  settings.relay = setup.wan_relay;
  settings.store_host = setup.store_host;
  settings.publish_lazily = setup.crossing_publishes_lazily;
  settings.wait_hook = setup.crossing_wait_hook;
  return std::make_shared<WanBackend>(settings, setup.exchange);
}

}  // namespace

const BackendMaker kWanMaker{/*load=*/nullptr, /*rendezvous=*/true, /*barrier=*/true, /*takes_crossing=*/false,
                             &make_wan};

WanBackend::WanBackend(const wan::WanSettings &settings, std::shared_ptr<Exchange> exchange)
    : exchange_(std::move(exchange)) {
  if (settings.world_size < 1 || settings.rank < 0 || settings.rank >= settings.world_size)
    fail(XFFL_EINVAL, "wan backend: rank ", settings.rank, " outside [0, ", settings.world_size, ")");
  if (settings.timeout_ms <= 0) fail(XFFL_EINVAL, "wan backend: timeout ", settings.timeout_ms, " ms is not positive");
  if (settings.streams < 1 || settings.streams > wan::kMaxStreams)
    fail(XFFL_EINVAL, "wan streams ", settings.streams, " outside [1, ", wan::kMaxStreams, "]");
  if (settings.encryption < XFFL_WAN_ENCRYPTION_NONE || settings.encryption > XFFL_WAN_ENCRYPTION_CHACHA20_POLY1305)
    fail(XFFL_EINVAL, "wan encryption ", static_cast<int>(settings.encryption),
         " is not 0 (none), 1 (aes-256-gcm) or 2 (chacha20-poly1305)");
  if (settings.encryption != XFFL_WAN_ENCRYPTION_NONE && settings.secret.empty())
    fail(XFFL_EINVAL, "wan encryption ", wan::encryption_name(settings.encryption),
         " needs the job's secret (XFFL_AUTH_TOKEN or XFFL_OPT_AUTH_TOKEN): its keys are derived from it");
  hub_ = std::make_shared<wan::WanHub>(settings, exchange_);
}

std::unique_ptr<Communicator> WanBackend::create_communicator(const GroupSpec &group) {
  const int size = group.members.size();
  if (group.my_index < 0 || group.my_index >= size || group.members.at(group.my_index) != hub_->settings().rank)
    fail(XFFL_EINTERNAL, "wan backend: rank ", hub_->settings().rank, " is not member ", group.my_index, " of ",
         group.description);
  if (size > 1) hub_->publish_address();  // a group alone needs no peer to find it
  return std::make_unique<wan::WanCommunicator>(hub_, group);
}

GroupIdentity WanBackend::claim_group(const std::vector<int> &sorted_members, uint32_t creation) {
  return exchange_->claim_group(sorted_members, creation, hub_->settings().timeout_ms);
}

void WanBackend::release_group(uint32_t slot) noexcept { exchange_->release_group(slot); }

void WanBackend::apply(const LiveSettings &settings) {
  if (settings.timeout_ms <= 0) fail(XFFL_EINVAL, "wan backend: timeout ", settings.timeout_ms, " ms is not positive");
  hub_->settings().timeout_ms = settings.timeout_ms;
  hub_->settings().log_level = settings.log_level;
}

}  // namespace xffl::comm
