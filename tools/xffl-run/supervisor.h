// Runs the ranks of one launch to the end: relays their output, forwards signals, fails fast.
#ifndef XFFL_RUN_SUPERVISOR_H
#define XFFL_RUN_SUPERVISOR_H

#include <chrono>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

#include "fd.h"
#include "options.h"
#include "output_relay.h"
#include "rank_env.h"
#include "signal_watch.h"

namespace xffl_run {

class Supervisor {
 public:
  Supervisor(const LaunchOptions& opts, const JobInfo& job, SignalWatch& signals);
  // On an exception path: SIGKILLs and reaps whatever was started, so nothing outlives us.
  ~Supervisor();
  Supervisor(const Supervisor&) = delete;
  Supervisor& operator=(const Supervisor&) = delete;

  // Starts every rank and returns xffl-run's exit code once all of them are gone. Throws ExecError or
  // SystemError if a rank cannot be started (the ones already started are killed first).
  int run();

 private:
  using Clock = std::chrono::steady_clock;

  struct Stream {
    UniqueFd fd;
    OutputRelay relay;
  };
  struct Rank {
    int index;
    pid_t pid;
    Stream out;
    Stream err;
    bool running = true;
    int wait_status = 0;
    // Its process group still had members when it was reaped. Only such groups are signalled after
    // the rank is gone: while a group has members its id cannot be handed to another process.
    bool left_members = false;
  };
  enum class StopReason { none, rank_failed, signal, max_time };

  void start_all();
  void supervise();
  int poll_timeout_ms() const;
  void forget_empty_groups();
  void pump(Stream& stream, std::size_t budget);
  void reap();
  void on_rank_exit(Rank& rank, int wait_status);
  void on_forwarded_signal(int signo);
  void begin_stop(StopReason reason, int stop_signal);
  void kill_running(int signo);
  void signal_leftover_groups(int signo);
  void sweep_leftover_groups();
  std::vector<int> running_ranks() const;
  std::string final_message() const;
  int exit_code() const;

  const LaunchOptions& opts_;
  const JobInfo& job_;
  SignalWatch& signals_;
  OutputSink stdout_sink_;
  OutputSink stderr_sink_;
  std::vector<Rank> ranks_;
  std::vector<char> read_buffer_;

  StopReason reason_ = StopReason::none;
  int failed_rank_ = -1;
  int received_signal_ = 0;
  std::vector<int> terminated_;  // ranks still running when the stop began
  std::vector<int> killed_;      // ranks that needed SIGKILL
  bool sent_kill_ = false;
  std::string kill_cause_;
  std::optional<Clock::time_point> kill_deadline_;
  std::optional<Clock::time_point> max_time_deadline_;
};

}  // namespace xffl_run

#endif
