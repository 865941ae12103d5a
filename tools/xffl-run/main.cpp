// xffl-run: a torchrun-style local launcher. See usage_text() and DESIGN.md section 6.
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <exception>
#include <string>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "bootstrap/env_registry.h"
#include "errors.h"
#include "free_port.h"
#include "options.h"
#include "rank_env.h"
#include "signal_watch.h"
#include "supervisor.h"

namespace {

// The bound on the lookup of a --master-addr given by name: the ranks' XFFL_TIMEOUT (--timeout, else
// the inherited variable, else the library's default), as every wait of the ranks is.
std::chrono::milliseconds lookup_timeout(const xffl_run::LaunchOptions& opts) {
  namespace registry = xffl::bootstrap::registry;
  const char* inherited = std::getenv(registry::name(registry::Var::Timeout));
  std::string text = opts.timeout ? *opts.timeout : inherited && *inherited ? inherited : "";
  char* end = nullptr;
  double seconds = text.empty() ? 0 : std::strtod(text.c_str(), &end);
  if (text.empty() || !end || *end != '\0' || !(seconds > 0 && seconds <= 2147483))
    seconds = std::strtod(registry::variable(registry::Var::Timeout).default_value, nullptr);
  return std::chrono::milliseconds(static_cast<long long>(seconds * 1000));
}

int launch(int argc, const char* const* argv) {
  using namespace xffl_run;
  LaunchOptions opts = parse_options(argc, argv);
  if (opts.show_help) {
    std::fputs(usage_text(), stdout);
    return 0;
  }
  if (opts.show_help_env) {
    namespace registry = xffl::bootstrap::registry;
    const bool markdown = *opts.show_help_env == "markdown";
    std::fputs((markdown ? registry::markdown_table() : registry::help_table()).c_str(), stdout);
    return 0;
  }
  // A facility's job names its federation with the job id (the federation's store keys, the wan
  // keys): every facility's job must share it, so it is the inherited XFFL_JOB_ID, else the library's
  // default, never a random one (also when XFFL_FACILITY comes from the environment).
  std::string job_id = make_job_id();
  const char* facility = std::getenv("XFFL_FACILITY");
  if (opts.facility || (facility && *facility)) {
    const char* inherited = std::getenv("XFFL_JOB_ID");
    job_id = inherited && *inherited ? inherited : "xffl";
  }
  // A port we draw stays held until we exit (free_port.h); a port given is the caller's to keep free.
  HeldPort drawn;
  if (!opts.master_port) drawn = find_free_port(opts.master_addr, lookup_timeout(opts));
  JobInfo job{opts.master_addr, opts.master_port ? *opts.master_port : drawn.port, job_id};
#ifdef __linux__
  // Processes a rank leaves behind are re-parented to us rather than to init, so we can reap them.
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
#endif
  SignalWatch signals;
  Supervisor supervisor(opts, job, signals);
  return supervisor.run();
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return launch(argc, argv);
  } catch (const xffl_run::UsageError& e) {
    std::fprintf(stderr, "xffl-run: error: %s\n", e.what());
    return xffl_run::kExitUsage;
  } catch (const xffl_run::ExecError& e) {
    std::fprintf(stderr, "xffl-run: %s\n", e.what());
    return xffl_run::kExitCannotExecute;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "xffl-run: %s\n", e.what());
    return xffl_run::kExitSystem;
  }
}
