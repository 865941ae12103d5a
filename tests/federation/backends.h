// The membership stores the federation tests run against, started and removed by the tests
// themselves on loopback: the built-in server (tools/xffl-federation, a child process) and an etcd
// cluster of `members` members on ports the test picks, with temporary data directories and etcd's
// user/password auth enabled (user "xffl", password = the job secret).
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
};

// Throws std::runtime_error with the tool's words when it does not start within 20 s.
Backend *start_xffl_server(const std::string &tool);
// nullptr when etcd or etcdctl is not installed (the caller skips with 77); throws when it is but
// the cluster does not come up within 45 s.
Backend *start_etcd_cluster(size_t members);

// A loopback port nobody listens on (bound, then closed).
int unused_port();

}  // namespace federation_test

#endif
