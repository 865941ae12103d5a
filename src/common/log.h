// The library's own log lines: "[xffl rank 3] INFO: rendezvous took 12.3 ms" on stderr.
//
// A Logger is a small value (level, rank, sink) handed to whoever logs, rather than a process-wide
// singleton: each state owns its level (XFFL_OPT_LOG_LEVEL), and tests capture lines through a sink.
// Writing is thread-safe: every line reaches the sink whole, never interleaved with another line.
#ifndef XFFL_SRC_COMMON_LOG_H
#define XFFL_SRC_COMMON_LOG_H

#include <chrono>
#include <functional>
#include <memory>
#include <sstream>
#include <string>

#include "xffl/log.h"
#include "xffl/types.h"

namespace xffl {

// "error", "warn" (or "warning"), "info", "debug", any case. Throws xffl::Error(XFFL_EINVAL) naming
// the variable ("XFFL_LOG_LEVEL='loud' is not one of error, warn, info, debug").
xffl_log_level_t parse_log_level(const std::string &text, const char *variable = "XFFL_LOG_LEVEL");

// "ERROR", "WARN", "INFO", "DEBUG".
const char *log_level_name(xffl_log_level_t level);

// The process-wide receiver of every logger without a sink of its own (xffl_set_log_callback); a null
// callback restores stderr. Taken under the lock that writes lines, so once this returns no line
// reaches the previous callback.
void set_log_callback(xffl_log_callback_t callback, void *user_data);

class Logger {
 public:
  // Receives one complete line, newline included. Called with the logger's lock held.
  using Sink = std::function<void(const std::string &line)>;

  // Warn level, no rank, stderr.
  Logger() = default;
  // rank < 0 means "not known yet": the prefix is then "[xffl] ". An empty sink means the process's
  // log callback (set_log_callback), or stderr when there is none.
  explicit Logger(xffl_log_level_t level, int rank = -1, Sink sink = {});

  xffl_log_level_t level() const { return level_; }
  int rank() const { return rank_; }
  Logger with_rank(int rank) const;
  Logger with_level(xffl_log_level_t level) const;

  bool enabled(xffl_log_level_t level) const { return level <= level_; }
  void write(xffl_log_level_t level, const std::string &message) const;

  template <typename... Parts>
  void error(const Parts &...parts) const { emit(XFFL_LOG_ERROR, parts...); }
  template <typename... Parts>
  void warn(const Parts &...parts) const { emit(XFFL_LOG_WARN, parts...); }
  template <typename... Parts>
  void info(const Parts &...parts) const { emit(XFFL_LOG_INFO, parts...); }
  template <typename... Parts>
  void debug(const Parts &...parts) const { emit(XFFL_LOG_DEBUG, parts...); }

 private:
  template <typename... Parts>
  void emit(xffl_log_level_t level, const Parts &...parts) const {
    if (!enabled(level)) return;  // formatting costs nothing when the level is off
    std::ostringstream text;
    (text << ... << parts);
    write(level, text.str());
  }

  xffl_log_level_t level_ = XFFL_LOG_WARN;
  int rank_ = -1;
  std::shared_ptr<const Sink> sink_;  // shared so copies of a logger are cheap
};

// Logs "<phase> took 12.3 ms" at info when it goes out of scope (or at finish(), once).
class PhaseTimer {
 public:
  PhaseTimer(Logger logger, std::string phase);
  ~PhaseTimer();
  PhaseTimer(const PhaseTimer &) = delete;
  PhaseTimer &operator=(const PhaseTimer &) = delete;

  double elapsed_ms() const;
  // Logs now instead of at scope end; later calls and the destructor then log nothing.
  void finish();

 private:
  Logger logger_;
  std::string phase_;
  std::chrono::steady_clock::time_point start_;
  bool finished_ = false;
};

}  // namespace xffl

#endif
