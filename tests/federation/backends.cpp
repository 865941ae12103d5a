#include "backends.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

namespace federation_test {

namespace {

using Clock = std::chrono::steady_clock;

bool on_path(const char *program) {
  std::string command = std::string("command -v ") + program + " >/dev/null 2>&1";
  return std::system(command.c_str()) == 0;
}

// In a forked child: SIGKILL when the test process dies, even without running its destructors (a
// test that aborts on an uncaught exception once left etcd members running after it).
void die_with_parent() {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() == 1) std::_Exit(127);  // the parent is already gone
}

// Stops a child with SIGTERM, then SIGKILL after 5 s; reaps it.
void stop_child(pid_t pid) {
  if (pid <= 0) return;
  ::kill(pid, SIGTERM);
  auto deadline = Clock::now() + std::chrono::seconds(5);
  while (Clock::now() < deadline) {
    if (::waitpid(pid, nullptr, WNOHANG) == pid) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
}

class XfflServer final : public Backend {
 public:
  explicit XfflServer(const std::string &tool) {
    int out[2];
    if (::pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
    pid_ = ::fork();
    if (pid_ == 0) {
      die_with_parent();
      ::dup2(out[1], 1);
      ::setenv("XFFL_AUTH_TOKEN", kSecret, 1);
      ::execl(tool.c_str(), tool.c_str(), "--listen", "127.0.0.1:0", static_cast<char *>(nullptr));
      std::_Exit(127);
    }
    ::close(out[1]);
    std::string line;
    auto deadline = Clock::now() + std::chrono::seconds(20);
    while (line.find('\n') == std::string::npos && Clock::now() < deadline) {
      pollfd entry{out[0], POLLIN, 0};
      if (::poll(&entry, 1, 200) <= 0) continue;
      char buffer[256];
      ssize_t n = ::read(out[0], buffer, sizeof buffer);
      if (n <= 0) break;
      line.append(buffer, static_cast<size_t>(n));
    }
    ::close(out[0]);
    // "xffl-federation: listening on 127.0.0.1:40123"
    size_t at = line.find("listening on ");
    size_t end = line.find_first_of(" \n", at == std::string::npos ? 0 : at + 13);
    if (at == std::string::npos) {
      stop_child(pid_);
      throw std::runtime_error("xffl-federation did not say where it listens: '" + line + "'");
    }
    address_ = line.substr(at + 13, end - at - 13);
  }
  ~XfflServer() override { stop_child(pid_); }
  std::string endpoint() const override { return "xffl://" + address_; }

 private:
  pid_t pid_ = -1;
  std::string address_;
};

class EtcdCluster final : public Backend {
  static constexpr const char *kRootPassword = "root-password";

 public:
  EtcdCluster(size_t members, bool tls, std::vector<std::string> hosts = {}, std::vector<std::string> netns = {})
      : tls_(tls), hosts_(std::move(hosts)), netns_(std::move(netns)) {
    if (hosts_.empty()) hosts_.assign(members, "127.0.0.1");
    if (hosts_.size() != members || (!netns_.empty() && netns_.size() != members) || (tls_ && hosts_[0] != "127.0.0.1"))
      throw std::runtime_error("an etcd cluster needs one host (and namespace) per member, and TLS loopback");
    // The members' data on tmpfs where there is one: etcd fsyncs its log on every write, and on a disk
    // that the other tests and builds keep busy one fsync can stall a member for longer than a heartbeat.
    std::string dir = (::access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp") + std::string("/xffl-etcd-XXXXXX");
    if (!::mkdtemp(dir.data())) throw std::runtime_error("mkdtemp failed");
    root_ = dir;
    if (tls_) make_certificates();
    const std::string scheme = tls_ ? "https://" : "http://";
    for (size_t i = 0; i < members; ++i) {
      client_ports_.push_back(unused_port());
      peer_ports_.push_back(unused_port());
    }
    std::string cluster;
    for (size_t i = 0; i < members; ++i)
      cluster += (i ? "," : "") + name(i) + "=http://" + hosts_[i] + ":" + std::to_string(peer_ports_[i]);
    for (size_t i = 0; i < members; ++i) {
      std::string client = scheme + hosts_[i] + ":" + std::to_string(client_ports_[i]);
      std::string peer = "http://" + hosts_[i] + ":" + std::to_string(peer_ports_[i]);
      // A generous election timeout: on a loaded 2-core machine a member's heartbeats may stall.
      std::vector<std::string> args = {"etcd", "--name", name(i), "--data-dir", root_ + "/" + name(i),
                                       "--listen-client-urls", client, "--advertise-client-urls", client,
                                       "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
                                       "--initial-cluster", cluster, "--initial-cluster-state", "new",
                                       "--initial-cluster-token", root_, "--heartbeat-interval", "100",
                                       "--election-timeout", "2000"};
      if (tls_)
        for (const std::string &arg : {std::string("--cert-file"), tls_file("server.pem"), std::string("--key-file"),
                                       tls_file("server.key"), std::string("--client-cert-auth"),
                                       std::string("--trusted-ca-file"), tls_file("ca.pem")})
          args.push_back(arg);
      member_args_.push_back(args);
      pids_.push_back(spawn(i));
    }
    // Health, then auth: root (etcd requires it before enabling auth) and the job's user "xffl".
    std::vector<size_t> everyone;
    for (size_t i = 0; i < members; ++i) everyone.push_back(i);
    const std::string all = etcdctl_target(everyone);
    if (!run_until(in_netns(0) + "etcdctl --endpoints=" + all + " --command-timeout=3s endpoint health", 45))
      throw std::runtime_error("the etcd cluster at " + all + " did not become healthy within 45 s (logs in " +
                               root_ + ")");
    const std::string ctl = in_netns(0) + "etcdctl --endpoints=" + all + " --command-timeout=5s ";
    for (const std::string &command :
         {ctl + "user add root:" + kRootPassword, ctl + "user grant-role root root",
          ctl + "user add xffl:" + std::string(kSecret), ctl + "user grant-role xffl root", ctl + "auth enable"})
      if (!run_until(command, 20)) throw std::runtime_error("etcd setup failed: " + command);
  }

  ~EtcdCluster() override {
    for (pid_t pid : pids_) stop_child(pid);
    if (root_.rfind("/dev/shm/xffl-etcd-", 0) == 0 || root_.rfind("/tmp/xffl-etcd-", 0) == 0) {
      std::string command = "rm -rf '" + root_ + "'";
      if (std::system(command.c_str()) != 0) std::fprintf(stderr, "could not remove %s\n", root_.c_str());
    }
  }

  std::string endpoint() const override { return (tls_ ? "etcds://" : "etcd://") + endpoints(); }
  std::string member_endpoint(size_t i) const override {
    return i < client_ports_.size()
               ? (tls_ ? "etcds://" : "etcd://") + hosts_[i] + ":" + std::to_string(client_ports_[i])
               : "";
  }
  std::string tls_file(const std::string &name) const override { return tls_ ? root_ + "/" + name : ""; }
  bool kill_member(size_t i) override {
    if (i >= pids_.size() || pids_[i] <= 0) return false;
    ::kill(pids_[i], SIGKILL);
    ::waitpid(pids_[i], nullptr, 0);
    pids_[i] = -1;
    return true;
  }
  // The member's data directory is kept: it rejoins as itself and catches up from the leader.
  bool restart_member(size_t i) override {
    if (i >= pids_.size() || pids_[i] > 0) return false;
    pids_[i] = spawn(i);
    // Auth is on by now: the health check's read needs a user.
    const std::string ctl = in_netns(i) + "etcdctl --endpoints=" + etcdctl_target({i}) + " --command-timeout=3s ";
    return run_until(ctl + "--user root:" + kRootPassword + " endpoint health", 45);
  }

 private:
  static std::string name(size_t i) { return "member" + std::to_string(i); }
  std::string endpoints() const {
    std::string out;
    for (size_t i = 0; i < client_ports_.size(); ++i)
      out += (i ? "," : "") + hosts_[i] + ":" + std::to_string(client_ports_[i]);
    return out;
  }
  // Member i's etcd, its output in its log (appended: a restarted member's too).
  pid_t spawn(size_t i) {
    const std::string log = root_ + "/" + name(i) + ".log";
    pid_t pid = ::fork();
    if (pid == 0) {
      die_with_parent();
      int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      if (fd >= 0) {
        ::dup2(fd, 1);
        ::dup2(fd, 2);
      }
      std::vector<std::string> args = member_args_[i];
      if (!netns_.empty()) args.insert(args.begin(), {"ip", "netns", "exec", netns_[i]});  // then execs etcd
      std::vector<char *> argv;
      for (std::string &arg : args) argv.push_back(arg.data());
      argv.push_back(nullptr);
      ::execvp(argv[0], argv.data());
      std::_Exit(127);
    }
    return pid;
  }
  // What runs etcdctl in member i's namespace ("" on loopback).
  std::string in_netns(size_t i) const { return netns_.empty() ? "" : "ip netns exec '" + netns_[i] + "' "; }
  // etcdctl's --endpoints value for these members' client ports (with TLS: https and the client
  // certificate the members require).
  std::string etcdctl_target(const std::vector<size_t> &members) const {
    std::string urls;
    for (size_t i : members)
      urls += (urls.empty() ? "" : ",") + std::string(tls_ ? "https://" : "") + hosts_[i] + ":" +
              std::to_string(client_ports_[i]);
    if (tls_)
      urls += " --cacert=" + tls_file("ca.pem") + " --cert=" + tls_file("client.pem") + " --key=" + tls_file("client.key");
    return urls;
  }
  // Runs a shell command until it succeeds, at most `seconds`; its output goes to the cluster's log.
  bool run_until(const std::string &command, int seconds) {
    auto deadline = Clock::now() + std::chrono::seconds(seconds);
    std::string quiet = "ETCDCTL_API=3 timeout 10 " + command + " >>'" + root_ + "/setup.log' 2>&1";
    while (Clock::now() < deadline) {
      if (std::system(quiet.c_str()) == 0) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
    }
    return false;
  }

  // A CA, the members' certificate for 127.0.0.1 and a client certificate it signed, and a second CA
  // that signed nothing: P-256 keys, valid for a day, made with the openssl command. The client
  // certificate has no CommonName: etcd's JSON gateway refuses one that has (HTTP 400, "CommonName of
  // client sending a request against gateway will be ignored"), as the identity would not reach etcd.
  void make_certificates() {
    const std::string d = "'" + root_ + "'/";
    const std::string key = " -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
    const std::string sign = " -CA " + d + "ca.pem -CAkey " + d + "ca.key -CAcreateserial -days 1";
    const std::vector<std::string> steps = {
        "openssl req -x509" + key + " -days 1 -subj /CN=xffl-test-ca -keyout " + d + "ca.key -out " + d + "ca.pem",
        "openssl req -x509" + key + " -days 1 -subj /CN=xffl-other-ca -keyout " + d + "other-ca.key -out " + d +
            "other-ca.pem",
        "openssl req" + key + " -subj /CN=127.0.0.1 -keyout " + d + "server.key -out " + d + "server.csr",
        "openssl x509 -req -in " + d + "server.csr" + sign + " -extfile " + d + "san.ext -out " + d + "server.pem",
        "openssl req" + key + " -subj /O=xffl-test-client -keyout " + d + "client.key -out " + d + "client.csr",
        "openssl x509 -req -in " + d + "client.csr" + sign + " -out " + d + "client.pem"};
    std::FILE *extensions = std::fopen((root_ + "/san.ext").c_str(), "w");  // the member's name: its address
    if (!extensions || std::fputs("subjectAltName=IP:127.0.0.1\n", extensions) < 0 || std::fclose(extensions) != 0)
      throw std::runtime_error("cannot write " + root_ + "/san.ext");
    for (const std::string &step : steps) {
      std::string quiet = step + " >>" + d + "setup.log 2>&1";
      if (std::system(quiet.c_str()) != 0) throw std::runtime_error("making test certificates failed: " + step);
    }
  }

  bool tls_ = false;
  std::vector<std::string> hosts_, netns_;
  std::string root_;
  std::vector<int> client_ports_, peer_ports_;
  std::vector<std::vector<std::string>> member_args_;
  std::vector<pid_t> pids_;
};

}  // namespace

namespace {

// Whether `port` (0: the kernel's pick) binds on loopback now; the port bound, 0 if none.
int bind_loopback(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return 0;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(port));
  socklen_t length = sizeof address;
  int bound = 0;
  if (::bind(fd, reinterpret_cast<sockaddr *>(&address), sizeof address) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr *>(&address), &length) == 0)
    bound = ntohs(address.sin_port);
  ::close(fd);
  return bound;
}

}  // namespace

// Drawn below the kernel's ephemeral range, as xffl-run draws MASTER_PORT (tools/xffl-run/free_port.h):
// no outgoing connection of another test takes it before the server binds it.
int unused_port() {
  std::ifstream range("/proc/sys/net/ipv4/ip_local_port_range");
  int low = 0, high = 0;
  if (range >> low >> high && low > 20064) {
    static std::mt19937 generator(std::random_device{}());
    std::uniform_int_distribution<int> draw(20000, low - 1);
    for (int attempt = 0; attempt < 64; ++attempt)
      if (int port = bind_loopback(draw(generator))) return port;
  }
  if (int port = bind_loopback(0)) return port;
  throw std::runtime_error("cannot bind a loopback port");
}

Backend *start_xffl_server(const std::string &tool) { return new XfflServer(tool); }

Backend *start_etcd_cluster(size_t members, bool tls) {
  if (!on_path("etcd") || !on_path("etcdctl") || (tls && !on_path("openssl"))) return nullptr;
  return new EtcdCluster(members, tls);
}

Backend *start_etcd_cluster_at(const std::vector<std::string> &hosts, const std::vector<std::string> &netns) {
  if (!on_path("etcd") || !on_path("etcdctl") || (!netns.empty() && !on_path("ip"))) return nullptr;
  return new EtcdCluster(hosts.size(), false, hosts, netns);
}

}  // namespace federation_test
