// What the cross-facility transport is told by set_global (BackendSetup), and the limits it keeps.
#ifndef XFFL_SRC_COMM_WAN_WAN_SETTINGS_H
#define XFFL_SRC_COMM_WAN_WAN_SETTINGS_H

#include <cstddef>
#include <memory>
#include <string>

#include "comm/crossing_wait_hook.h"
#include "xffl/types.h"

namespace xffl::comm::wan {

constexpr int kMaxStreams = 64;
// The unit a transfer is cut into and handed to a free stream: small enough that N streams share a
// 1 MiB ring chunk, large enough that a frame's header and tag (48 bytes) cost nothing.
constexpr size_t kFrameBytes = size_t{256} << 10;
// Socket buffers set from XFFL_WAN_BDP are at least this per stream.
constexpr size_t kMinSocketBuffer = size_t{64} << 10;

// What a dial-out rank publishes in place of its address.
constexpr const char *kDialOutOnly = "dial-out";
// What a rank with a relay publishes in place of its address: this prefix, then the relay's "host:port".
constexpr const char *kViaRelay = "via relay ";

struct WanSettings {
  int rank = 0;
  int world_size = 1;
  int timeout_ms = 300000;
  xffl_log_level_t log_level = XFFL_LOG_WARN;
  int streams = 4;
  xffl_wan_encryption_t encryption = XFFL_WAN_ENCRYPTION_NONE;
  std::string secret;  // the job's XFFL_AUTH_TOKEN ("" for none); never printed
  std::string job_id;
  // The bandwidth-delay product of the link between facilities, in bytes (XFFL_WAN_BDP); each stream's
  // SO_SNDBUF and SO_RCVBUF are set to BDP / streams (at least kMinSocketBuffer). 0 leaves the kernel's
  // autotuning alone, which grows a window up to net.ipv4.tcp_rmem's maximum by itself.
  size_t bdp_bytes = 0;
  // The host of the job's store; this rank listens on the address its host uses to reach it (the
  // route a peer in another facility takes back), or on its primary address when that route is
  // loopback but the store's host is not (listen_address.h). Empty: none known, as such a name.
  std::string store_host;
  // XFFL_WAN_DIAL_OUT: this rank never listens; it dials every peer itself, whatever their ranks (a
  // facility whose firewall passes only outbound connections). It publishes kDialOutOnly instead of
  // an address. Two such ranks cannot reach each other: XFFL_EINVAL naming both.
  bool dial_out = false;
  // XFFL_WAN_RELAY ("host:port" of the facility's xffl-relay; empty: none): as dial_out, this rank never
  // listens, but it publishes kViaRelay + relay instead of kDialOutOnly: a peer that would dial it dials
  // the relay, and this rank dials the relay too; the relay splices the two (relay_hello.h). It still
  // dials a peer that listens directly.
  std::string relay;
  // Whether this rank listens for its peers' streams (neither dial_out nor a relay).
  bool listens() const { return !dial_out && relay.empty(); }
  // Publish this rank's address only when a group of more than one member first needs it (facility
  // mode: ranks that never cross facilities never reach the federation's store). False: at once.
  bool publish_lazily = false;
  // Polled on every iteration of every wait (comm/crossing_wait_hook.h); null: none.
  std::shared_ptr<CrossingWaitHook> wait_hook;
};

}  // namespace xffl::comm::wan

#endif
