// getaddrinfo that returns by a deadline. glibc's resolver waits `timeout` x `attempts` x nameservers
// for a DNS server that does not answer (5 s x 2 x up to 3 by default), whatever XFFL_TIMEOUT says; a
// rank whose MASTER_ADDR is a host name would sit there long past its own timeout.
//
// This file depends on nothing else of the library, so that xffl-run, which does not link libxffl,
// compiles it too (its --master-addr).
#ifndef XFFL_SRC_BOOTSTRAP_NAME_LOOKUP_H
#define XFFL_SRC_BOOTSTRAP_NAME_LOOKUP_H

#include <netdb.h>

#include <chrono>
#include <memory>
#include <string>

namespace xffl::bootstrap::net {

struct AddrinfoFree {
  void operator()(addrinfo *list) const {
    if (list) ::freeaddrinfo(list);
  }
};
using AddrinfoList = std::unique_ptr<addrinfo, AddrinfoFree>;

struct NameLookup {
  enum Kind { Ok, Failed, Timeout } kind = Ok;
  int rc = 0;         // getaddrinfo's code when Failed
  int error = 0;      // errno of the lookup when rc is EAI_SYSTEM
  AddrinfoList list;  // when Ok
};

// getaddrinfo(host, service, hints), or Timeout once the deadline passes while it still runs. An
// empty host is getaddrinfo's NULL node (with AI_PASSIVE: the wildcard address). A numeric address
// (or an empty host) is looked up inline, at once, whatever the deadline; a name is looked up on a
// thread of its own (name_lookup.cpp says why), and a deadline already past gives Timeout without
// starting one.
NameLookup lookup_name(const std::string &host, const std::string &service, const addrinfo &hints,
                       std::chrono::steady_clock::time_point deadline);

}  // namespace xffl::bootstrap::net

#endif
