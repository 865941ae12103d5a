// The membership stores the federation tests run against, started and removed by the tests
// themselves on loopback (for tests/netns, in the namespaces it made): the built-in server
// (tools/xffl-federation, a child process) and an etcd cluster of `members` members on ports the test
// picks, with temporary data directories and etcd's user/password auth enabled (user "xffl", password
// = the job secret).
#ifndef XFFL_TESTS_FEDERATION_BACKENDS_H
#define XFFL_TESTS_FEDERATION_BACKENDS_H

#include <sys/types.h>

#include <string>
#include <vector>

namespace federation_test {

constexpr const char *kSecret = "federation-test-secret";

class Backend {
 public:
  virtual ~Backend() = default;
  // "xffl://127.0.0.1:40123" or "etcd://127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3".
  virtual std::string endpoint() const = 0;
  // The same store, reached with another port for member i (etcd); "" when it has no members.
  virtual std::string member_endpoint(size_t) const { return ""; }
  // Kills member i with SIGKILL (etcd); false when the backend has no such member.
  virtual bool kill_member(size_t) { return false; }
  // Starts killed member i again with its data (etcd) and waits until it answers; false when the
  // backend has no such killed member or it does not answer within 45 s.
  virtual bool restart_member(size_t) { return false; }
  // With TLS (start_etcd_cluster's tls): the PEM files the test made; empty otherwise.
  virtual std::string tls_file(const std::string &) const { return ""; }
};

// Throws std::runtime_error with the tool's words when it does not start within 20 s.
Backend *start_xffl_server(const std::string &tool);
// nullptr when etcd or etcdctl is not installed (the caller skips with 77); throws when it is but
// the cluster does not come up within 45 s.
// tls: the members serve HTTPS with certificates of a CA the test makes (openssl), require client
// certificates (--client-cert-auth), and endpoint() is etcds://. tls_file() names the files: "ca.pem",
// "client.pem", "client.key", and "other-ca.pem" (a CA that signed nothing). nullptr also when the
// openssl command is missing.
Backend *start_etcd_cluster(size_t members, bool tls = false);
// The same cluster (without TLS) with member i listening on hosts[i] instead of 127.0.0.1, started
// inside network namespace netns[i] (`ip netns exec`, which execs etcd in the same process) when
// netns is not empty: tests/netns puts one member in each simulated facility. etcdctl runs in
// netns[0] for the whole cluster and in netns[i] for member i. nullptr as above.
Backend *start_etcd_cluster_at(const std::vector<std::string> &hosts, const std::vector<std::string> &netns);

// A loopback port nobody listens on (bound, then closed).
int unused_port();

}  // namespace federation_test

#endif
