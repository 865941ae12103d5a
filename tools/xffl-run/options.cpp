#include "options.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>

#include "comm/backend_names.h"
#include "errors.h"

namespace xffl_run {
namespace {

long long parse_integer(const std::string& option, const std::string& text) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
    throw UsageError(option + " expects a whole number, got '" + text + "'");
  errno = 0;
  long long value = std::strtoll(text.c_str(), nullptr, 10);
  if (errno == ERANGE || value > 1000000000LL) throw UsageError(option + " value '" + text + "' is too large");
  return value;
}

int parse_at_least_one(const std::string& option, const std::string& text) {
  long long value = parse_integer(option, text);
  if (value < 1) throw UsageError(option + " must be at least 1, got " + text);
  return static_cast<int>(value);
}

double parse_seconds(const std::string& option, const std::string& text, bool zero_allowed) {
  char* end = nullptr;
  errno = 0;
  double value = text.empty() ? NAN : std::strtod(text.c_str(), &end);
  bool valid = !text.empty() && end && *end == '\0' && errno == 0 && std::isfinite(value) &&
               text.find_first_not_of("0123456789.") == std::string::npos;
  if (!valid) throw UsageError(option + " expects a number of seconds, got '" + text + "'");
  if (value < 0 || (!zero_allowed && value == 0))
    throw UsageError(option + " must be " + (zero_allowed ? "at least 0" : "positive") + ", got " + text);
  return value;
}

std::vector<int> parse_federation_sizes(const std::string& text) {
  std::vector<int> sizes;
  std::string::size_type start = 0;
  while (true) {
    std::string::size_type comma = text.find(',', start);
    std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (item.empty()) throw UsageError("--federated expects F or F1,F2,.. with positive sizes, got '" + text + "'");
    sizes.push_back(parse_at_least_one("--federated", item));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return sizes;
}

// The library's backend names (comm/backend_names.h), as XFFL_BACKEND takes them: "none, ucx or nccl".
// Only those that may be the main backend (not wan, a crossing backend only).
std::string backend_choices() {
  std::vector<xffl::comm::BackendName> names;
  for (const xffl::comm::BackendName& entry : xffl::comm::backend_names())
    if (entry.main) names.push_back(entry);
  std::string text;
  for (size_t i = 0; i < names.size(); ++i)
    text += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + std::string(names[i].name);
  return text;
}

bool backend_known(const std::string& name) {
  for (const xffl::comm::BackendName& entry : xffl::comm::backend_names())
    if (entry.main && name == entry.name) return true;
  return false;
}

// Checks that need more than one option at a time.
void validate_together(const LaunchOptions& opts) {
  if (opts.nproc == 0) throw UsageError("missing -n N (the number of processes)");
  if (opts.command.empty()) throw UsageError("missing the program to run (xffl-run -n N [options] -- PROG ARGS...)");
  if (opts.nproc % opts.nodes != 0)
    throw UsageError("--nodes " + std::to_string(opts.nodes) + " does not divide -n " + std::to_string(opts.nproc));
  if (opts.facility && !opts.federation)
    throw UsageError("--facility " + std::to_string(*opts.facility) +
                     " needs --federation ENDPOINT (xffl://host:port or etcd://h1:2379,...)");
  if (opts.federation && !opts.facility)
    throw UsageError("--federation " + *opts.federation + " needs --facility I (this job's index in --federated)");
  if (opts.facility) {
    if (!opts.federated)
      throw UsageError("--facility " + std::to_string(*opts.facility) +
                       " needs --federated F1,F2,.. listing every facility's size in processes");
    std::vector<int> sizes = parse_federation_sizes(*opts.federated);
    if (*opts.facility >= static_cast<int>(sizes.size()))
      throw UsageError("--facility " + std::to_string(*opts.facility) + " outside [0, " + std::to_string(sizes.size()) +
                       "): --federated " + *opts.federated + " lists " + std::to_string(sizes.size()) + " facilities");
    const int mine = sizes[static_cast<size_t>(*opts.facility)];
    if (mine != opts.nproc)
      throw UsageError("-n " + std::to_string(opts.nproc) + " is not facility " + std::to_string(*opts.facility) +
                       "'s size " + std::to_string(mine) + " in --federated " + *opts.federated +
                       " (each job is one facility)");
    return;
  }
  if (opts.federated) {
    std::vector<int> sizes = parse_federation_sizes(*opts.federated);
    if (sizes.size() == 1 && opts.nproc % sizes[0] != 0)
      throw UsageError("--federated " + *opts.federated + " does not divide -n " + std::to_string(opts.nproc));
    long long sum = 0;
    for (int size : sizes) sum += size;
    if (sizes.size() > 1 && sum != opts.nproc)
      throw UsageError("--federated " + *opts.federated + " sums to " + std::to_string(sum) + ", not -n " +
                       std::to_string(opts.nproc));
  }
}

}  // namespace

LaunchOptions parse_options(int argc, const char* const* argv) {
  LaunchOptions opts;
  using Setter = std::function<void(const std::string& option, const std::string& value)>;
  const std::map<std::string, Setter> with_value = {
      {"-n", [&](const std::string& o, const std::string& v) { opts.nproc = parse_at_least_one(o, v); }},
      {"--nproc", [&](const std::string& o, const std::string& v) { opts.nproc = parse_at_least_one(o, v); }},
      {"--nodes", [&](const std::string& o, const std::string& v) { opts.nodes = parse_at_least_one(o, v); }},
      {"--federated",
       [&](const std::string&, const std::string& v) {
         parse_federation_sizes(v);
         opts.federated = v;
       }},
      {"--facility",
       [&](const std::string& o, const std::string& v) { opts.facility = static_cast<int>(parse_integer(o, v)); }},
      {"--federation",
       [&](const std::string& o, const std::string& v) {
         if (v.empty()) throw UsageError(o + " must not be empty");
         opts.federation = v;
       }},
      {"--hsdp", [&](const std::string& o, const std::string& v) { opts.hsdp = parse_at_least_one(o, v); }},
      {"--backend",
       [&](const std::string& o, const std::string& v) {
         if (!backend_known(v)) throw UsageError(o + " expects " + backend_choices() + ", got '" + v + "'");
         opts.backend = v;
       }},
      {"--streams", [&](const std::string& o, const std::string& v) { opts.streams = parse_at_least_one(o, v); }},
      {"--timeout",
       [&](const std::string& o, const std::string& v) {
         parse_seconds(o, v, false);
         opts.timeout = v;
       }},
      {"--grace", [&](const std::string& o, const std::string& v) { opts.grace_seconds = parse_seconds(o, v, true); }},
      {"--max-time",
       [&](const std::string& o, const std::string& v) { opts.max_time_seconds = parse_seconds(o, v, false); }},
      {"--bind",
       [&](const std::string& o, const std::string& v) {
         if (v != "core" && v != "none") throw UsageError(o + " expects core or none, got '" + v + "'");
         opts.bind_cores = v == "core";
       }},
      {"--master-addr",
       [&](const std::string& o, const std::string& v) {
         if (v.empty()) throw UsageError(o + " must not be empty");
         opts.master_addr = v;
       }},
      {"--master-port",
       [&](const std::string& o, const std::string& v) {
         long long port = parse_integer(o, v);
         if (port < 1 || port > 65535) throw UsageError(o + " must be in 1..65535, got " + v);
         opts.master_port = static_cast<int>(port);
       }},
  };

  int i = 1;
  for (; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") {
      ++i;
      break;
    }
    if (arg == "-h" || arg == "--help") {
      opts.show_help = true;
      return opts;
    }
    if (arg == "--help-env" || arg.rfind("--help-env=", 0) == 0) {
      std::string format = arg == "--help-env" ? "text" : arg.substr(std::string("--help-env=").size());
      if (format != "text" && format != "markdown")
        throw UsageError("--help-env expects text or markdown, got '" + format + "'");
      opts.show_help_env = format;
      return opts;
    }
    if (arg == "--tag-output" || arg == "--no-tag-output") {
      opts.tag_output = arg == "--tag-output";
      continue;
    }
    if (arg.empty() || arg[0] != '-') break;  // the program, torchrun style without "--"

    std::string name = arg;
    std::optional<std::string> value;
    if (arg.rfind("--", 0) == 0 && arg.find('=') != std::string::npos) {  // --opt=value
      name = arg.substr(0, arg.find('='));
      value = arg.substr(arg.find('=') + 1);
    } else if (arg.rfind("-n", 0) == 0 && arg.size() > 2 && arg[2] != '-') {  // -n4
      name = "-n";
      value = arg.substr(2);
    }
    auto setter = with_value.find(name);
    if (setter == with_value.end()) throw UsageError("unknown option '" + arg + "' (see xffl-run --help)");
    if (!value) {
      if (i + 1 >= argc) throw UsageError(name + " needs a value");
      value = argv[++i];
    }
    setter->second(name, *value);
  }
  for (; i < argc; ++i) opts.command.emplace_back(argv[i]);
  validate_together(opts);
  return opts;
}

const char* usage_text() {
  return "usage: xffl-run -n N [--nodes M] [--federated F|F1,F2,..] [--hsdp S] [--backend none|ucx|nccl]\n"
         "                [--facility I --federation ENDPOINT]\n"
         "                [--streams K] [--timeout SECONDS] [--grace SECONDS] [--max-time SECONDS]\n"
         "                [--master-addr ADDR] [--master-port PORT] [--tag-output|--no-tag-output]\n"
         "                [--bind core|none] -- PROG ARGS...\n"
         "\n"
         "Starts N local processes of PROG with torchrun's environment (RANK, WORLD_SIZE, LOCAL_RANK,\n"
         "LOCAL_WORLD_SIZE, GROUP_RANK, GROUP_WORLD_SIZE, ROLE_RANK, ROLE_WORLD_SIZE, MASTER_ADDR,\n"
         "MASTER_PORT, TORCHELASTIC_RUN_ID) plus XFFL_JOB_ID and XFFL_* for the options given, and,\n"
         "unless already set, UCX_TCP_PUT_ENABLE=n and XFFL_UCX_PROCESS_SETTINGS=1 (UCX 1.13 would abort\n"
         "a rank whose peer dies during a transfer; see XFFL_OPT_UCX_PROCESS_SETTINGS).\n"
         "\n"
         "  -n N                 number of processes (ranks), >= 1\n"
         "  --nodes M            simulate M nodes of N/M processes each (default 1)\n"
         "  --federated F|F1,..  XFFL_FEDERATED, in processes: one size dividing N, or sizes summing to N\n"
         "  --hsdp S             XFFL_HSDP\n"
         "  --facility I         XFFL_FACILITY: this job is facility I of a federation of facility jobs;\n"
         "                       --federated then lists every facility's size and -n must be facility I's\n"
         "  --federation E       XFFL_FEDERATION: the federation's store, xffl://host:port (xffl-federation)\n"
         "                       or etcd://h1:2379,..; with --facility. The job id (XFFL_JOB_ID) is then\n"
         "                       the inherited one, else \"xffl\": every facility's job must share it\n"
         "  --backend B          XFFL_BACKEND: none, ucx or nccl\n"
         "  --streams K          XFFL_STREAMS\n"
         "  --timeout SECONDS    XFFL_TIMEOUT: the library's bound on every wait\n"
         "  --grace SECONDS      after SIGTERM, wait this long before SIGKILL (default 5)\n"
         "  --max-time SECONDS   end the whole job after this long, exit 124 (default: no limit)\n"
         "  --master-addr ADDR   rendezvous address (default 127.0.0.1)\n"
         "  --master-port PORT   rendezvous port (default: a free port on ADDR)\n"
         "  --no-tag-output      pass output through untouched instead of prefixing lines with [rank]\n"
         "  --bind core|none     core: rank r runs on CPU r mod K of the K CPUs xffl-run may use (its own\n"
         "                       affinity); worth it where ranks outnumber cores, where the kernel may\n"
         "                       leave three ranks on one core and one on another. none (default): unpinned\n"
         "  --help-env[=FORMAT]  the XFFL_* variables the library reads (FORMAT text or markdown)\n"
         "\n"
         "When a rank fails the others get SIGTERM, then SIGKILL after the grace period; the exit code is\n"
         "the first failing rank's (128+signal for a signal death). SIGINT, SIGTERM and SIGHUP are\n"
         "forwarded to every rank; a second one kills them at once.\n";
}

}  // namespace xffl_run
