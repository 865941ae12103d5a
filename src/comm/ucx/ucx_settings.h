// Settings one UcxBackend shares with its communicators; changed through the backend's setters and
// read at the start of every collective.
#ifndef XFFL_SRC_COMM_UCX_UCX_SETTINGS_H
#define XFFL_SRC_COMM_UCX_UCX_SETTINGS_H

#include "comm/algorithms/point_to_point.h"
#include "xffl/types.h"

namespace xffl::comm::ucx {

struct UcxSettings {
  int timeout_ms = 300000;
  xffl_log_level_t log_level = XFFL_LOG_WARN;
  algorithms::Tuning tuning;
  // Peers on this host: false lets UCX use shared memory (and CMA) but a dead neighbour is found by
  // the timeout (XFFL_ETIMEOUT); true asks UCX to report failures (XFFL_EPEER), which in UCX 1.13
  // restricts it to TCP over loopback. Peers on other hosts are always watched.
  bool peer_failure_detection_on_host = false;
  // XFFL_OPT_UCX_PROCESS_SETTINGS: the process-wide UCX settings (UCX_TCP_PUT_ENABLE=n in the
  // environment unless set, the log filter of ucx_log_filter.h), taken when the worker is made.
  bool process_settings = false;
  // The worker of a UCX crossing backend (XFFL_OPT_CROSS_FACILITY_BACKEND=ucx): a context of its own
  // that carries only the groups that cross facilities. It sends every message eagerly (UCX's
  // RNDV_THRESH=inf, unless the environment sets UCX_RNDV_THRESH): over a WAN a rendezvous costs a
  // round trip per message before its data moves, and the crossing's chunks are such messages (256
  // MiB over a 1 Gbit/s, 10 ms link: 1.40x the bound with rendezvous, 1.06x eager; bench/facilities).
  // It publishes under its own keys (address_key), beside a main UCX backend's in the same store.
  bool crossing = false;
};

}  // namespace xffl::comm::ucx

#endif
