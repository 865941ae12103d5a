// start_etcd_cluster (backends.h) as a process, for harnesses that are not C++ (the facility tests'
// run_continue.py): the same cluster as the store tests', one member per facility, driven on stdin.
//
//   federation_etcd_cluster MEMBERS [--hosts H0,H1,... [--netns NS0,NS1,...]]
//
// --hosts: member i listens on Hi instead of 127.0.0.1; --netns: member i runs in network namespace
// NSi (tests/netns: one member per simulated facility, reached across the shaped links).
// Prints "endpoint etcd://127.0.0.1:p0,...", "secret S" (the password of etcd user "xffl"), one
// "member I etcd://127.0.0.1:pI" per member, then "ready". Then reads one command a line:
//   kill I       SIGKILL of member I; answers "killed I"
//   restart I    member I started again with its data, once it answers; "restarted I"
// and answers "failed <command>" to anything it could not do. At the end of its input it stops the
// members and removes their data. Exit 77 when etcd or etcdctl is not installed; the members die with
// this process (even killed).
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "backends.h"

namespace {

std::vector<std::string> split(const std::string &list) {
  std::vector<std::string> out;
  std::istringstream words(list);
  for (std::string word; std::getline(words, word, ',');) out.push_back(word);
  return out;
}

}  // namespace

int main(int argc, char **argv) {
  const long members = argc >= 2 ? std::atol(argv[1]) : 0;
  std::vector<std::string> hosts, netns;
  bool usage = members < 1;
  for (int i = 2; i < argc; i += 2) {
    const std::string flag = argv[i];
    if (i + 1 >= argc || (flag != "--hosts" && flag != "--netns")) {
      usage = true;
      break;
    }
    (flag == "--hosts" ? hosts : netns) = split(argv[i + 1]);
  }
  if (usage || (!hosts.empty() && hosts.size() != static_cast<size_t>(members)) ||
      (!netns.empty() && netns.size() != static_cast<size_t>(members)) || (!netns.empty() && hosts.empty())) {
    std::fprintf(stderr, "usage: federation_etcd_cluster MEMBERS [--hosts H0,H1,... [--netns NS0,NS1,...]]\n");
    return 2;
  }
  std::unique_ptr<federation_test::Backend> cluster;
  try {
    cluster.reset(hosts.empty() ? federation_test::start_etcd_cluster(static_cast<size_t>(members))
                                : federation_test::start_etcd_cluster_at(hosts, netns));
  } catch (const std::exception &error) {
    std::fprintf(stderr, "federation_etcd_cluster: %s\n", error.what());
    return 1;
  }
  if (!cluster) {
    std::printf("etcd or etcdctl is not installed\n");
    return 77;
  }
  std::cout << "endpoint " << cluster->endpoint() << "\nsecret " << federation_test::kSecret << "\n";
  for (long i = 0; i < members; ++i) std::cout << "member " << i << " " << cluster->member_endpoint(i) << "\n";
  std::cout << "ready" << std::endl;
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream words(line);
    std::string verb;
    long member = -1;
    words >> verb >> member;
    bool done = member >= 0 && ((verb == "kill" && cluster->kill_member(static_cast<size_t>(member))) ||
                                (verb == "restart" && cluster->restart_member(static_cast<size_t>(member))));
    std::cout << (done ? (verb == "kill" ? "killed " : "restarted ") + std::to_string(member) : "failed " + line)
              << std::endl;
  }
  return 0;
}
