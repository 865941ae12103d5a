// start_etcd_cluster (backends.h) as a process, for harnesses that are not C++ (the facility tests'
// run_continue.py): the same cluster as the store tests', one member per facility, driven on stdin.
//
//   federation_etcd_cluster MEMBERS
//
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

#include "backends.h"

int main(int argc, char **argv) {
  const long members = argc == 2 ? std::atol(argv[1]) : 0;
  if (members < 1) {
    std::fprintf(stderr, "usage: federation_etcd_cluster MEMBERS\n");
    return 2;
  }
  std::unique_ptr<federation_test::Backend> cluster;
  try {
    cluster.reset(federation_test::start_etcd_cluster(static_cast<size_t>(members)));
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
