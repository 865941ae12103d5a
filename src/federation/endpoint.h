// Where the federation's membership store is: XFFL_FEDERATION's text, parsed.
//
//   etcd://[user@]h1:2379,h2:2379,h3:2379   an etcd v3 cluster, spoken to through its JSON gateway; the
//                                           members are tried in turn (failover on a connection error).
//                                           `user` is the etcd user the job secret is the password of
//                                           (default "xffl").
//   xffl://host:port                        the built-in server, tools/xffl-federation.
//
// Hosts are names, IPv4 addresses or [IPv6] in brackets. Every member needs an explicit port.
#ifndef XFFL_SRC_FEDERATION_ENDPOINT_H
#define XFFL_SRC_FEDERATION_ENDPOINT_H

#include <string>
#include <vector>

namespace xffl::federation {

struct Member {
  std::string host;  // without brackets
  int port = 0;
  std::string text() const;  // "h1:2379", "[::1]:2379"
};

struct Endpoint {
  enum class Kind { Etcd, Xffl };
  Kind kind = Kind::Xffl;
  std::string user;  // etcd only: the etcd user the job secret authenticates ("xffl" unless given)
  std::vector<Member> members;  // one for xffl://
  std::string text;  // as given, for messages
};

constexpr const char *kDefaultEtcdUser = "xffl";

// Throws xffl::Error(XFFL_EINVAL) naming `source` (the variable it came from) and the text, and
// saying what is wrong: an unknown scheme, no member, a member without a port, a port outside
// [1, 65535], an xffl:// endpoint with more than one member.
Endpoint parse_endpoint(const std::string &text, const char *source);

}  // namespace xffl::federation

#endif
