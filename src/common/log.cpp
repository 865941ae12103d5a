#include "common/log.h"

#include <strings.h>

#include <cstdio>
#include <cstdlib>
#include <iomanip>
#include <mutex>

#include "common/error.h"

namespace xffl {

namespace {

// One lock for every logger: lines from different states and threads share stderr.
std::mutex &line_lock() {
  static std::mutex lock;
  return lock;
}

// The host's receiver of log lines (xffl_set_log_callback). Process-wide by contract, as libgit2's
// git_trace_set; read and written only under line_lock(), so a replaced callback is never called again.
struct LogCallback {
  xffl_log_callback_t callback = nullptr;
  void *user_data = nullptr;
};

LogCallback &log_callback() {
  static LogCallback installed;
  return installed;
}

// True while this thread runs the host's callback, which holds line_lock(): a line the callback
// causes goes straight to stderr, and xffl_set_log_callback is refused, instead of a self-deadlock.
thread_local bool delivering_to_host = false;

}  // namespace

xffl_log_level_t parse_log_level(const std::string &text, const char *variable) {
  const char *names[] = {"error", "warn", "info", "debug"};
  for (int level = XFFL_LOG_ERROR; level <= XFFL_LOG_DEBUG; ++level)
    if (strcasecmp(text.c_str(), names[level]) == 0) return static_cast<xffl_log_level_t>(level);
  if (strcasecmp(text.c_str(), "warning") == 0) return XFFL_LOG_WARN;
  fail(XFFL_EINVAL, variable, "='", text, "' is not one of error, warn, info, debug");
}

const char *log_level_name(xffl_log_level_t level) {
  switch (level) {
    case XFFL_LOG_ERROR: return "ERROR";
    case XFFL_LOG_WARN: return "WARN";
    case XFFL_LOG_INFO: return "INFO";
    case XFFL_LOG_DEBUG: return "DEBUG";
  }
  return "LOG";
}

void set_log_callback(xffl_log_callback_t callback, void *user_data) {
  if (delivering_to_host) fail(XFFL_ESTATE, "called from inside the log callback, which must not call xffl");
  std::lock_guard<std::mutex> hold(line_lock());
  log_callback() = LogCallback{callback, callback ? user_data : nullptr};
}

Logger::Logger(xffl_log_level_t level, int rank, Sink sink)
    : level_(level), rank_(rank), sink_(sink ? std::make_shared<const Sink>(std::move(sink)) : nullptr) {}

Logger Logger::with_rank(int rank) const {
  Logger copy = *this;
  copy.rank_ = rank;
  return copy;
}

Logger Logger::with_level(xffl_log_level_t level) const {
  Logger copy = *this;
  copy.level_ = level;
  return copy;
}

void Logger::write(xffl_log_level_t level, const std::string &message) const {
  if (!enabled(level)) return;
  std::string line = rank_ >= 0 ? "[xffl rank " + std::to_string(rank_) + "] " : std::string("[xffl] ");
  line += log_level_name(level);
  line += ": ";
  line += message;
  line += '\n';
  if (delivering_to_host) {  // this thread already holds line_lock(), inside the callback
    std::fwrite(line.data(), 1, line.size(), stderr);
    return;
  }
  std::lock_guard<std::mutex> hold(line_lock());
  const LogCallback &host = log_callback();
  if (sink_) {
    (*sink_)(line);
  } else if (host.callback) {
    struct Delivering {  // reset even if a (C++) callback throws through here against the contract
      Delivering() { delivering_to_host = true; }
      ~Delivering() { delivering_to_host = false; }
    } delivering;
    host.callback(level, rank_, message.c_str(), host.user_data);
  } else {
    std::fwrite(line.data(), 1, line.size(), stderr);
    std::fflush(stderr);
  }
}

PhaseTimer::PhaseTimer(Logger logger, std::string phase)
    : logger_(std::move(logger)), phase_(std::move(phase)), start_(std::chrono::steady_clock::now()) {}

PhaseTimer::~PhaseTimer() {
  try {
    finish();
  } catch (...) {  // a log line is never worth an exception out of a destructor
  }
}

double PhaseTimer::elapsed_ms() const {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
}

void PhaseTimer::finish() {
  if (finished_) return;
  finished_ = true;
  if (!logger_.enabled(XFFL_LOG_INFO)) return;
  std::ostringstream text;
  text << phase_ << " took " << std::fixed << std::setprecision(1) << elapsed_ms() << " ms";
  logger_.write(XFFL_LOG_INFO, text.str());
}

}  // namespace xffl
