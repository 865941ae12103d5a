// The one table of backends: every kind this library knows of (built in or not), its name (built-in
// ones from backend_names.h), the memory it moves, and its maker. Adding a backend is its folder under comm/ and its line in
// backend_table.cpp; the factory (state/backend_factory.cpp) brings up whatever a line names.
#ifndef XFFL_SRC_COMM_BACKEND_TABLE_H
#define XFFL_SRC_COMM_BACKEND_TABLE_H

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "comm/communicator.h"
#include "comm/crossing_wait_hook.h"
#include "comm/exchange.h"
#include "xffl/types.h"

namespace xffl::comm {

// What a maker gets from the factory.
struct BackendSetup {
  int rank = 0;
  int world_size = 1;
  int timeout_ms = 0;
  xffl_log_level_t log_level = XFFL_LOG_WARN;
  // Whether the backend may change process-wide settings of the library it loads
  // (XFFL_OPT_UCX_PROCESS_SETTINGS).
  bool process_settings = false;
  // The job's rendezvous store, for a maker with `rendezvous`; null otherwise. Shared with the backend,
  // which keeps it as long as it needs it.
  std::shared_ptr<Exchange> exchange;
  // Whether this backend is the crossing backend (XFFL_OPT_CROSS_FACILITY_BACKEND), not the main one.
  bool crossing = false;
  // The job's secret and identity (XFFL_OPT_AUTH_TOKEN, XFFL_OPT_JOB_ID) and the host of its store: the
  // wan backend authenticates its connections and derives its keys from them, and listens on the route
  // to the store's host.
  std::string auth_token;
  std::string job_id;
  std::string store_host;
  // The wan backend's settings (XFFL_OPT_WAN_STREAMS, XFFL_OPT_WAN_ENCRYPTION, XFFL_WAN_BDP,
  // XFFL_WAN_DIAL_OUT, XFFL_WAN_RELAY).
  int wan_streams = 4;
  xffl_wan_encryption_t wan_encryption = XFFL_WAN_ENCRYPTION_NONE;
  size_t wan_bdp_bytes = 0;
  bool wan_dial_out = false;
  std::string wan_relay;  // XFFL_WAN_RELAY: "host:port"; empty: none
  // Facility mode (state/facility_link.h): the crossing backend publishes its address only when a
  // group of more than one member first needs it, so that ranks that never cross facilities never
  // reach the federation's store; and every wait of the crossing backend polls this hook (null: none).
  bool crossing_publishes_lazily = false;
  std::shared_ptr<CrossingWaitHook> crossing_wait_hook;
};

// How the factory brings a backend up, in this order on every rank: load (every backend involved),
// the rendezvous (when one needs it), make, set_crossing_backend, the barrier (when one needs it).
struct BackendMaker {
  // Local work that can fail on this rank alone (loading a library), done before the rendezvous so
  // that such a rank fails before the others wait for it. May be null.
  void (*load)();
  bool rendezvous;  // needs the job's store (BackendSetup::exchange)
  // xffl_set_global returns on a rank only once every rank made its backend (UCX: every worker
  // address is published before any rank looks one up).
  bool barrier;
  // Groups that cross facilities may run on another backend (XFFL_OPT_CROSS_FACILITY_BACKEND), given
  // by Backend::set_crossing_backend.
  bool takes_crossing;
  // Collective when `rendezvous`. Throws xffl::Error.
  std::shared_ptr<Backend> (*make)(const BackendSetup &setup);
};

struct BackendEntry {
  xffl_backend_t kind;
  const char *name;  // lower case
  // What Backend::memory_kind() of the backend will say, known before it is made (xffl_set_global
  // checks the device type against it first).
  MemoryKind memory;
  const BackendMaker *maker;  // null: this build of xffl lacks the backend
  const char *missing;        // why, when maker is null: "this build of xffl has no UCX support"
};

// Every line, built in or not: the built-in ones in enum order, then any registered.
const std::vector<BackendEntry> &backend_table();

// The name of `kind`'s line (registered lines too); "unknown" for a kind no line names.
const char *backend_name(int kind);

// The line named `name` (case-insensitive), or nullopt.
std::optional<xffl_backend_t> backend_from_name(const std::string &name);

// The line of `kind`, or null for a kind no line names.
const BackendEntry *find_backend(int kind);

// Adds a line (tests register a fake backend this way): only before the table is first read (any
// state, name lookup or describe), else XFFL_ESTATE; so the table is fixed while anyone reads it. Not
// thread-safe. XFFL_EINVAL when the kind or the name (case-insensitive) is already in the table.
void register_backend(const BackendEntry &entry);

}  // namespace xffl::comm

#endif
