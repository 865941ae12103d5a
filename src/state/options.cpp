#include "state/options.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

#include "common/error.h"

namespace xffl {

namespace {

int parse_log_level(const char *text) {
  const char *names[] = {"error", "warn", "info", "debug"};
  for (int level = 0; level < 4; ++level)
    if (strcasecmp(text, names[level]) == 0) return level;
  if (strcasecmp(text, "warning") == 0) return XFFL_LOG_WARN;
  fail(XFFL_EINVAL, "XFFL_LOG_LEVEL='", text, "' is not one of error, warn, info, debug");
}

int parse_timeout_ms(const char *text) {
  errno = 0;
  char *end = nullptr;
  double seconds = std::strtod(text, &end);
  if (errno || end == text || *end != '\0' || !std::isfinite(seconds) || seconds <= 0 || seconds > 2147483.0)
    fail(XFFL_EINVAL, "XFFL_TIMEOUT='", text, "' is not a number of seconds in (0, 2147483]");
  return static_cast<int>(std::ceil(seconds * 1000.0));
}

}  // namespace

Options Options::from_environment() {
  Options options;
  if (const char *timeout = std::getenv("XFFL_TIMEOUT"); timeout && *timeout)
    options.timeout_ms = parse_timeout_ms(timeout);
  if (const char *level = std::getenv("XFFL_LOG_LEVEL"); level && *level)
    options.log_level = static_cast<xffl_log_level_t>(parse_log_level(level));
  return options;
}

void Options::set(xffl_option_t option, int value) {
  switch (option) {
    case XFFL_OPT_TIMEOUT_MS:
      if (value < 1) fail(XFFL_EINVAL, "timeout ", value, " ms must be at least 1");
      timeout_ms = value;
      return;
    case XFFL_OPT_FEDERATED_STRATEGY:
      if (value != XFFL_FEDAVG_HIERARCHICAL && value != XFFL_FEDAVG_FLAT)
        fail(XFFL_EINVAL, "federated strategy ", value, " is not XFFL_FEDAVG_HIERARCHICAL (0) or XFFL_FEDAVG_FLAT (1)");
      strategy = static_cast<xffl_federated_strategy_t>(value);
      return;
    case XFFL_OPT_LOG_LEVEL:
      if (value < XFFL_LOG_ERROR || value > XFFL_LOG_DEBUG)
        fail(XFFL_EINVAL, "log level ", value, " outside [0, 3] (error, warn, info, debug)");
      log_level = static_cast<xffl_log_level_t>(value);
      return;
  }
  fail(XFFL_EINVAL, "unknown option ", static_cast<int>(option));
}

int Options::get(xffl_option_t option) const {
  switch (option) {
    case XFFL_OPT_TIMEOUT_MS: return timeout_ms;
    case XFFL_OPT_FEDERATED_STRATEGY: return strategy;
    case XFFL_OPT_LOG_LEVEL: return log_level;
  }
  fail(XFFL_EINVAL, "unknown option ", static_cast<int>(option));
}

}  // namespace xffl
