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
};

}  // namespace xffl::comm::ucx

#endif
