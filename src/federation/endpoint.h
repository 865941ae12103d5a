// Where the federation's membership store is: XFFL_FEDERATION's text, parsed.
//
//   etcd://[user@]h1:2379,h2:2379,h3:2379   an etcd v3 cluster, spoken to through its JSON gateway; the
//                                           members are tried in turn (failover on a connection error).
//                                           `user` is the etcd user the job secret is the password of
//                                           (default "xffl"). Plain HTTP: the secret crosses in clear
//                                           when the client authenticates, so only on trusted networks.
//   etcds://[user@]h1:2379,...              the same over TLS (HTTPS): the members' certificates are
//                                           verified against XFFL_FEDERATION_CA (default: the system's
//                                           CA store), and XFFL_FEDERATION_CERT / _KEY present a client
//                                           certificate to an etcd started with --client-cert-auth.
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

// The files of an etcds:// connection (settings.h reads them from XFFL_FEDERATION_CA, _CERT, _KEY):
// PEM paths; empty: the system's CA store, and no client certificate.
struct TlsFiles {
  std::string ca;
  std::string cert;
  std::string key;
};

struct Endpoint {
  enum class Kind { Etcd, Xffl };
  Kind kind = Kind::Xffl;
  bool tls = false;  // etcds://
  TlsFiles tls_files;  // etcds:// only
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
