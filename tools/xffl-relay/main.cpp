// xffl-relay: forwards the cross-facility streams of ranks that cannot accept connections (issue 11).
// One per facility, at its gateway or login node, on an address that both its own compute nodes and
// the other facilities reach; the facility's jobs name it in XFFL_WAN_RELAY=HOST:PORT.
//
//   xffl-relay --listen HOST:PORT [--hello-timeout S] [--pair-timeout S] [--buffer BYTES]
//              [--max-connections N] [--log-level error|warn|info|debug]
//
// It pairs the two connections of each stream by their hello (src/comm/wan/relay_hello.h) and splices
// them; the ranks then authenticate each other and encrypt end to end through it. It needs no job
// secret and reads none: it cannot read (with XFFL_WAN_ENCRYPTION) or forge what it forwards. The first
// line on stdout is "xffl-relay: listening on HOST:PORT"; logs go to stderr. SIGINT or SIGTERM ends it.
#include <signal.h>
#include <sys/resource.h>
#include <sys/signalfd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "comm/wan/relay_hello.h"
#include "common/error.h"
#include "relay_server.h"

namespace {

constexpr const char *kUsage =
    "usage: xffl-relay --listen HOST:PORT [options]\n"
    "  Forwards the cross-facility streams of a facility whose ranks cannot accept connections; its jobs\n"
    "  set XFFL_WAN_RELAY=HOST:PORT (an address its compute nodes and the other facilities reach). It needs\n"
    "  no job secret: the ranks authenticate and encrypt end to end through it. Ends on SIGINT or SIGTERM.\n"
    "  --listen HOST:PORT      address to serve (port 0: one the kernel picks; printed on stdout)\n"
    "  --hello-timeout S       a connection's pairing hello must arrive within S seconds (default 10)\n"
    "  --pair-timeout S        an unpaired connection is dropped after S seconds (default 600)\n"
    "  --buffer BYTES          bytes held per direction of a pair (default 1048576; at least 4096)\n"
    "  --max-connections N     connections held at most; more are refused (default 4096)\n"
    "  --log-level LEVEL       error, warn, info (default: pairs and their end) or debug\n";

[[noreturn]] void usage_error(const std::string &text) {
  std::fprintf(stderr, "xffl-relay: error: %s\n%s", text.c_str(), kUsage);
  std::exit(2);
}

double seconds_arg(const std::string &name, const std::string &text) {
  char *end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !(value > 0) || value > 86400 * 365)
    usage_error(name + " '" + text + "' is not a number of seconds above 0");
  return value;
}

unsigned long long count_arg(const std::string &name, const std::string &text, unsigned long long low,
                             unsigned long long high) {
  char *end = nullptr;
  errno = 0;
  const unsigned long long value = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || text[0] == '-' || *end != '\0' || errno != 0 || value < low || value > high)
    usage_error(name + " '" + text + "' is not a whole number in [" + std::to_string(low) + ", " +
                std::to_string(high) + "]");
  return value;
}

int run(int argc, char **argv) {
  xffl::relay::RelayOptions options;
  std::string listen;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i], value;
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    const size_t equals = arg.find('=');
    if (arg.rfind("--", 0) == 0 && equals != std::string::npos) {
      value = arg.substr(equals + 1);
      arg = arg.substr(0, equals);
    } else if (i + 1 < argc && arg.rfind("--", 0) == 0) {
      value = argv[++i];
    } else {
      usage_error(arg.rfind("--", 0) == 0 ? arg + " needs a value" : "unknown argument '" + arg + "'");
    }
    if (arg == "--listen") {
      listen = value;
    } else if (arg == "--hello-timeout") {
      options.hello_seconds = seconds_arg(arg, value);
    } else if (arg == "--pair-timeout") {
      options.pair_seconds = seconds_arg(arg, value);
    } else if (arg == "--buffer") {
      options.buffer_bytes = count_arg(arg, value, 4096, 1ULL << 30);
    } else if (arg == "--max-connections") {
      options.max_connections = count_arg(arg, value, 2, 1000000);
    } else if (arg == "--log-level") {
      const char *names[] = {"error", "warn", "info", "debug"};
      int level = -1;
      for (int l = 0; l < 4; ++l)
        if (value == names[l]) level = l;
      if (level < 0) usage_error("--log-level '" + value + "' is none of error, warn, info, debug");
      options.level = static_cast<xffl::relay::Level>(level);
    } else {
      usage_error("unknown argument '" + arg + "'");
    }
  }
  if (listen.empty()) usage_error("--listen HOST:PORT is required (the address the facilities reach)");
  std::string why;
  if (!xffl::comm::wan::split_host_port(listen, true, &options.host, &options.port, &why))
    usage_error("--listen " + why);

  // Signals are read from a descriptor in the event loop, so they are blocked first.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigprocmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);
  const int stop = signalfd(-1, &signals, SFD_CLOEXEC | SFD_NONBLOCK);
  if (stop < 0) {
    std::fprintf(stderr, "xffl-relay: error: signalfd: %s\n", std::strerror(errno));
    return 1;
  }
  // Each connection is a descriptor: the soft limit is raised to the hard one, and --max-connections
  // kept below it (a listener whose accept fails for want of descriptors would stay readable and spin).
  rlimit files{};
  if (getrlimit(RLIMIT_NOFILE, &files) == 0) {
    if (files.rlim_cur < files.rlim_max) {
      files.rlim_cur = files.rlim_max;
      setrlimit(RLIMIT_NOFILE, &files);
      getrlimit(RLIMIT_NOFILE, &files);
    }
    const rlim_t spare = 32;  // the listener, epoll, the signal, stdio, a refused connection's moment
    if (files.rlim_cur != RLIM_INFINITY && options.max_connections + spare > files.rlim_cur) {
      const size_t allowed = files.rlim_cur > 2 * spare ? static_cast<size_t>(files.rlim_cur - spare) : 2;
      std::fprintf(stderr, "xffl-relay: --max-connections %zu lowered to %zu: the open-file limit is %llu\n",
                   options.max_connections, allowed, static_cast<unsigned long long>(files.rlim_cur));
      options.max_connections = allowed;
    }
  }
  try {
    xffl::relay::RelayServer server(options);
    std::printf("xffl-relay: listening on %s\n", server.address().c_str());
    std::fflush(stdout);
    server.run(stop);
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    const double cpu = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                       static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
    const xffl::relay::RelayTotals &totals = server.totals();
    std::fprintf(stderr, "xffl-relay: served %llu pair(s), forwarded %llu bytes, dropped %llu connection(s); "
                 "%.3f CPU seconds\n",
                 static_cast<unsigned long long>(totals.pairs), static_cast<unsigned long long>(totals.bytes),
                 static_cast<unsigned long long>(totals.dropped), cpu);
  } catch (const xffl::Error &error) {
    std::fprintf(stderr, "xffl-relay: error: %s\n", error.what());
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char **argv) { return run(argc, argv); }
