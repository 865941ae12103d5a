#include "supervisor.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <optional>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include "errors.h"
#include "rank_process.h"

extern char** environ;

namespace xffl_run {
namespace {

constexpr std::size_t kReadChunk = 64 * 1024;
// After a rank exits, what is still in its pipes is read up to this much; more would come from a
// descendant still writing, which must not keep us from finishing.
constexpr std::size_t kDrainBudget = 16 * 1024 * 1024;

std::string join(const std::vector<int>& ranks) {
  std::string text;
  for (int rank : ranks) text += (text.empty() ? "" : ",") + std::to_string(rank);
  return text;
}

std::string seconds_text(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", seconds);
  return text;
}

std::string describe_status(int wait_status) {
  if (WIFSIGNALED(wait_status)) return "killed by signal " + std::to_string(WTERMSIG(wait_status));
  return "exited with code " + std::to_string(WEXITSTATUS(wait_status));
}

bool failed(int wait_status) { return !(WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0); }

// A rank and whatever it started share its process group; signalling the group reaches them all.
// A rank that moved itself to another group is still reached directly.
void signal_rank(pid_t pid, int signo) {
  if (::kill(-pid, signo) != 0) ::kill(pid, signo);
}

bool group_alive(pid_t pgid) { return ::kill(-pgid, 0) == 0 || errno == EPERM; }

}  // namespace

Supervisor::Supervisor(const LaunchOptions& opts, const JobInfo& job, SignalWatch& signals)
    : opts_(opts),
      job_(job),
      signals_(signals),
      stdout_sink_(STDOUT_FILENO),
      stderr_sink_(STDERR_FILENO),
      read_buffer_(kReadChunk) {}

Supervisor::~Supervisor() {
  for (Rank& rank : ranks_) {
    if (!rank.running) continue;
    signal_rank(rank.pid, SIGKILL);
    while (::waitpid(rank.pid, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
}

int Supervisor::run() {
  if (opts_.max_time_seconds)
    max_time_deadline_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                            std::chrono::duration<double>(*opts_.max_time_seconds));
  start_all();
  supervise();
  sweep_leftover_groups();
  if (reason_ != StopReason::none) stderr_sink_.write(final_message() + "\n");
  return exit_code();
}

void Supervisor::start_all() {
  ranks_.reserve(static_cast<std::size_t>(opts_.nproc));
  const std::vector<int> cpus = opts_.bind_cores ? allowed_cpus() : std::vector<int>{};
  for (int index = 0; index < opts_.nproc; ++index) {
    std::vector<std::string> env = rank_environment(opts_, job_, index, environ);
    std::optional<int> cpu;
    if (!cpus.empty()) cpu = cpus[static_cast<std::size_t>(index) % cpus.size()];
    StartedRank started = start_rank(opts_.command, env, signals_, cpu);
    ranks_.push_back(Rank{index, started.pid,
                          Stream{std::move(started.stdout_read), OutputRelay(index, opts_.tag_output, stdout_sink_)},
                          Stream{std::move(started.stderr_read), OutputRelay(index, opts_.tag_output, stderr_sink_)}});
  }
}

void Supervisor::supervise() {
  std::vector<pollfd> fds;
  std::vector<Stream*> streams;
  while (std::any_of(ranks_.begin(), ranks_.end(), [](const Rank& r) { return r.running; })) {
    fds.assign(1, pollfd{signals_.wake_fd(), POLLIN, 0});
    streams.assign(1, nullptr);
    for (Rank& rank : ranks_) {
      for (Stream* stream : {&rank.out, &rank.err}) {
        if (!stream->fd) continue;
        fds.push_back(pollfd{stream->fd.get(), POLLIN, 0});
        streams.push_back(stream);
      }
    }
    if (::poll(fds.data(), fds.size(), poll_timeout_ms()) < 0 && errno != EINTR) throw SystemError("poll", errno);

    for (std::size_t i = 1; i < fds.size(); ++i)
      if (fds[i].revents != 0) pump(*streams[i], kReadChunk);

    SignalWatch::Arrived arrived = signals_.take();
    for (int signo : arrived.forwarded) on_forwarded_signal(signo);
    reap();  // every round, not only on SIGCHLD: cheap, and immune to coalesced signals
    forget_empty_groups();

    Clock::time_point now = Clock::now();
    if (max_time_deadline_ && now >= *max_time_deadline_) {
      max_time_deadline_.reset();
      if (reason_ == StopReason::none) begin_stop(StopReason::max_time, SIGTERM);
    }
    if (kill_deadline_ && now >= *kill_deadline_) {
      kill_deadline_.reset();
      kill_cause_ = "after the " + seconds_text(opts_.grace_seconds) + " s grace period";
      kill_running(SIGKILL);
    }
  }
}

void Supervisor::forget_empty_groups() {
  for (Rank& rank : ranks_)
    if (rank.left_members && !group_alive(rank.pid)) rank.left_members = false;
}

int Supervisor::poll_timeout_ms() const {
  // While a finished rank's group has members, look at it every second: once it is empty its id may
  // be reused by an unrelated process, and we must have stopped signalling it by then.
  constexpr int kLeftoverCheckMs = 1000;
  bool watching_leftovers =
      std::any_of(ranks_.begin(), ranks_.end(), [](const Rank& rank) { return rank.left_members; });
  std::optional<Clock::time_point> next;
  if (watching_leftovers) next = Clock::now() + std::chrono::milliseconds(kLeftoverCheckMs);
  for (const auto& deadline : {kill_deadline_, max_time_deadline_})
    if (deadline && (!next || *deadline < *next)) next = deadline;
  if (!next) return -1;
  auto remaining = std::chrono::duration<double, std::milli>(*next - Clock::now()).count();
  return remaining <= 0 ? 0 : static_cast<int>(std::min(std::ceil(remaining), 1e9));
}

void Supervisor::pump(Stream& stream, std::size_t budget) {
  while (stream.fd && budget > 0) {
    ssize_t got = ::read(stream.fd.get(), read_buffer_.data(), std::min(budget, read_buffer_.size()));
    if (got > 0) {
      stream.relay.feed(read_buffer_.data(), static_cast<std::size_t>(got));
      budget -= static_cast<std::size_t>(got);
      continue;
    }
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    // End of file (or a broken pipe): the last partial line goes out now.
    stream.relay.finish();
    stream.fd.reset();
  }
}

void Supervisor::reap() {
  while (true) {
    int wait_status = 0;
    pid_t pid = ::waitpid(-1, &wait_status, WNOHANG);
    if (pid < 0 && errno == EINTR) continue;
    if (pid <= 0) return;  // nothing more now, or no children at all
    for (Rank& rank : ranks_)
      if (rank.pid == pid && rank.running) on_rank_exit(rank, wait_status);
    // Any other pid is a descendant of a rank that was re-parented to us (we are its subreaper).
  }
}

void Supervisor::on_rank_exit(Rank& rank, int wait_status) {
  rank.running = false;
  rank.wait_status = wait_status;
  // Its output up to its death is already in the pipes; a descendant holding them open must not
  // keep us waiting for an end of file.
  for (Stream* stream : {&rank.out, &rank.err}) {
    pump(*stream, kDrainBudget);
    stream->relay.finish();
    stream->fd.reset();
  }
  rank.left_members = group_alive(rank.pid);
  if (failed(wait_status) && reason_ == StopReason::none) {
    failed_rank_ = rank.index;
    begin_stop(StopReason::rank_failed, SIGTERM);
  }
}

void Supervisor::on_forwarded_signal(int signo) {
  if (reason_ == StopReason::none) {
    received_signal_ = signo;
    begin_stop(StopReason::signal, signo);
    return;
  }
  // A second interrupt while stopping: the user does not want to wait for the grace period.
  kill_deadline_.reset();
  kill_cause_ = "after a second signal";
  kill_running(SIGKILL);
}

void Supervisor::begin_stop(StopReason reason, int stop_signal) {
  reason_ = reason;
  terminated_ = running_ranks();
  for (Rank& rank : ranks_)
    if (rank.running) signal_rank(rank.pid, stop_signal);
  signal_leftover_groups(stop_signal);
  kill_deadline_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                      std::chrono::duration<double>(opts_.grace_seconds));
}

void Supervisor::kill_running(int signo) {
  for (Rank& rank : ranks_) {
    if (!rank.running) continue;
    signal_rank(rank.pid, signo);
    if (std::find(killed_.begin(), killed_.end(), rank.index) == killed_.end()) killed_.push_back(rank.index);
  }
  signal_leftover_groups(signo);
  sent_kill_ = true;
}

void Supervisor::signal_leftover_groups(int signo) {
  for (Rank& rank : ranks_)
    if (!rank.running && rank.left_members && group_alive(rank.pid)) ::kill(-rank.pid, signo);
}

std::vector<int> Supervisor::running_ranks() const {
  std::vector<int> running;
  for (const Rank& rank : ranks_)
    if (rank.running) running.push_back(rank.index);
  return running;
}

void Supervisor::sweep_leftover_groups() {
  // Every rank is gone; processes they started in their groups would be orphans. Same treatment as
  // the ranks: SIGTERM, the grace period, then SIGKILL (at once if we already had to kill).
  reap();  // zombies of re-parented descendants would look like living members
  std::vector<const Rank*> leftovers;
  for (const Rank& rank : ranks_)
    if (rank.left_members && group_alive(rank.pid)) leftovers.push_back(&rank);
  if (leftovers.empty()) return;

  std::vector<int> owners;
  for (const Rank* rank : leftovers) owners.push_back(rank->index);
  stderr_sink_.write("xffl-run: ranks " + join(owners) +
                     " left processes running in their process groups; terminating them\n");

  int stop_signal = sent_kill_ ? SIGKILL : SIGTERM;
  for (const Rank* rank : leftovers) ::kill(-rank->pid, stop_signal);
  Clock::time_point deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                  std::chrono::duration<double>(opts_.grace_seconds));
  constexpr int kCheckEveryMs = 20;
  while (true) {
    reap();
    leftovers.erase(std::remove_if(leftovers.begin(), leftovers.end(),
                                   [](const Rank* rank) { return !group_alive(rank->pid); }),
                    leftovers.end());
    if (leftovers.empty()) return;
    SignalWatch::Arrived arrived = signals_.take();
    if (stop_signal != SIGKILL && (Clock::now() >= deadline || !arrived.forwarded.empty())) {
      stop_signal = SIGKILL;
      for (const Rank* rank : leftovers) ::kill(-rank->pid, SIGKILL);
      deadline = Clock::now() + std::chrono::seconds(5);  // bound the wait for SIGKILL to land
    } else if (stop_signal == SIGKILL && Clock::now() >= deadline) {
      return;
    }
    pollfd wake{signals_.wake_fd(), POLLIN, 0};
    ::poll(&wake, 1, kCheckEveryMs);
  }
}

std::string Supervisor::final_message() const {
  std::string message = "xffl-run: ";
  switch (reason_) {
    case StopReason::rank_failed:
      message += "rank " + std::to_string(failed_rank_) + " " +
                 describe_status(ranks_[static_cast<std::size_t>(failed_rank_)].wait_status) + " (first failure)";
      if (!terminated_.empty()) message += "; terminated ranks " + join(terminated_);
      break;
    case StopReason::signal:
      message += "received signal " + std::to_string(received_signal_) + " (" + ::strsignal(received_signal_) + ")";
      message += terminated_.empty() ? "; no rank was running" : "; forwarded to ranks " + join(terminated_);
      break;
    case StopReason::max_time:
      message += "--max-time " + seconds_text(*opts_.max_time_seconds) + " s expired; terminated ranks " +
                 join(terminated_) + " (still running)";
      break;
    case StopReason::none:
      break;
  }
  if (!killed_.empty()) {
    std::vector<int> killed = killed_;
    std::sort(killed.begin(), killed.end());
    message += "; SIGKILL to ranks " + join(killed) + " " + kill_cause_;
  }
  return message;
}

int Supervisor::exit_code() const {
  switch (reason_) {
    case StopReason::rank_failed: {
      int status = ranks_[static_cast<std::size_t>(failed_rank_)].wait_status;
      return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
    }
    case StopReason::signal:
      return 128 + received_signal_;
    case StopReason::max_time:
      return kExitMaxTime;
    case StopReason::none:
      break;
  }
  return 0;
}

}  // namespace xffl_run
