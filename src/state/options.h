// Options of a state (timeout, strategy, log level), with defaults from the environment.
#ifndef XFFL_SRC_STATE_OPTIONS_H
#define XFFL_SRC_STATE_OPTIONS_H

#include "xffl/types.h"

namespace xffl {

struct Options {
  int timeout_ms = 300000;
  xffl_federated_strategy_t strategy = XFFL_FEDAVG_HIERARCHICAL;
  xffl_log_level_t log_level = XFFL_LOG_WARN;

  // XFFL_TIMEOUT (seconds, may be fractional) and XFFL_LOG_LEVEL (error, warn, info, debug).
  // A malformed value is an error that names the variable.
  static Options from_environment();
  void set(xffl_option_t option, int value);
  int get(xffl_option_t option) const;
};

}  // namespace xffl

#endif
