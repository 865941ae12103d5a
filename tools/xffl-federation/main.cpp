// xffl-federation: serves a federation's membership (leases, revisions, compare-and-swap, prefix
// listing, watch) on one TCP port until SIGINT or SIGTERM.
//
//   xffl-federation [--listen HOST:PORT] [--stats]
//
// The job secret is XFFL_AUTH_TOKEN, as for every rank of the job (unset: no authentication). Port 0
// lets the kernel choose; the first line on stdout is "xffl-federation: listening on HOST:PORT", so a
// script (or a test) can read where. Clients use XFFL_FEDERATION=xffl://HOST:PORT.
#include <signal.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "bootstrap/env_read.h"
#include "common/environment.h"
#include "common/error.h"
#include "federation/endpoint.h"
#include "federation/federation_server.h"

namespace {

constexpr const char *kUsage =
    "usage: xffl-federation [--listen HOST:PORT] [--stats]\n"
    "  Serves a federation's membership store (XFFL_FEDERATION=xffl://HOST:PORT) until SIGINT/SIGTERM.\n"
    "  --listen HOST:PORT   address to serve (default 127.0.0.1:0: loopback, a port the kernel picks)\n"
    "  --stats              on SIGINT/SIGTERM, print the requests served by type before exiting\n"
    "  The job secret is read from XFFL_AUTH_TOKEN (unset: no authentication).\n";

int run(int argc, char **argv) {
  std::string listen = "127.0.0.1:0";
  bool stats = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (arg == "--stats") {
      stats = true;
    } else if (arg == "--listen" && i + 1 < argc) {
      listen = argv[++i];
    } else if (arg.rfind("--listen=", 0) == 0) {
      listen = arg.substr(9);
    } else {
      std::fprintf(stderr, "xffl-federation: error: unknown argument '%s'\n%s", arg.c_str(), kUsage);
      return 2;
    }
  }
  xffl::federation::Member member;
  try {
    // The same host:port rules as a client's endpoint, except that port 0 is allowed here.
    bool any_port = listen.size() > 2 && listen.compare(listen.size() - 2, 2, ":0") == 0;
    std::string text = "xffl://" + (any_port ? listen.substr(0, listen.size() - 2) + ":1" : listen);
    member = xffl::federation::parse_endpoint(text, "--listen").members.at(0);
    if (any_port) member.port = 0;
  } catch (const xffl::Error &error) {
    std::fprintf(stderr, "xffl-federation: error: %s\n", error.what());
    return 2;
  }

  // Signals are taken synchronously by this thread, so they must be blocked before any thread starts.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  xffl::federation::ServerOptions options;
  xffl::Environment environment = xffl::process_environment();
  options.secret = xffl::bootstrap::registry::read_text(environment, xffl::bootstrap::registry::Var::AuthToken)
                       .value_or(std::string());
  xffl::federation::FederationServer server(options, member.host, member.port);
  std::printf("xffl-federation: listening on %s%s\n", server.address().c_str(),
              options.secret.empty() ? " (no job secret: unauthenticated)" : "");
  std::fflush(stdout);
  int received = 0;
  sigwait(&signals, &received);
  server.stop();
  if (stats) {
    std::printf("xffl-federation: served %s\n", server.request_counts().c_str());
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace

int main(int argc, char **argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception &error) {
    std::fprintf(stderr, "xffl-federation: error: %s\n", error.what());
    return 1;
  }
}
