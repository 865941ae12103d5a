#include "federation/endpoint.h"

#include <cctype>

#include "common/error.h"

namespace xffl::federation {

namespace {

constexpr const char *kForms = "etcd://[user@]host:port[,host:port...], etcds://... (TLS) or xffl://host:port";

[[noreturn]] void bad(const char *source, const std::string &text, const std::string &why) {
  fail(XFFL_EINVAL, source, "='", text, "' is not a federation endpoint: ", why, " (expected ", kForms, ")");
}

Member parse_member(const std::string &item, const char *source, const std::string &text) {
  if (item.empty()) bad(source, text, "a member is empty (two commas, or a comma at an end)");
  Member member;
  std::string port;
  if (item[0] == '[') {
    size_t close = item.find(']');
    if (close == std::string::npos) bad(source, text, "member '" + item + "' opens '[' without closing it");
    member.host = item.substr(1, close - 1);
    if (close + 1 >= item.size() || item[close + 1] != ':')
      bad(source, text, "member '" + item + "' has no port (write [address]:port)");
    port = item.substr(close + 2);
  } else {
    size_t colon = item.rfind(':');
    if (colon == std::string::npos) bad(source, text, "member '" + item + "' has no port (write host:port)");
    member.host = item.substr(0, colon);
    port = item.substr(colon + 1);
    if (member.host.find(':') != std::string::npos)
      bad(source, text, "member '" + item + "' has more than one ':' (write an IPv6 address as [address]:port)");
  }
  if (member.host.empty()) bad(source, text, "member '" + item + "' has no host");
  bool digits = !port.empty() && port.size() <= 5;
  for (char c : port) digits = digits && std::isdigit(static_cast<unsigned char>(c));
  int value = digits ? std::stoi(port) : 0;
  if (!digits || value < 1 || value > 65535)
    bad(source, text, "member '" + item + "' has port '" + port + "', not an integer in [1, 65535]");
  member.port = value;
  return member;
}

}  // namespace

std::string Member::text() const {
  return host.find(':') != std::string::npos ? "[" + host + "]:" + std::to_string(port)
                                             : host + ":" + std::to_string(port);
}

Endpoint parse_endpoint(const std::string &text, const char *source) {
  Endpoint endpoint;
  endpoint.text = text;
  std::string rest;
  if (text.rfind("etcd://", 0) == 0) {
    endpoint.kind = Endpoint::Kind::Etcd;
    rest = text.substr(7);
  } else if (text.rfind("etcds://", 0) == 0) {
    endpoint.kind = Endpoint::Kind::Etcd;
    endpoint.tls = true;
    rest = text.substr(8);
  } else if (text.rfind("xffl://", 0) == 0) {
    endpoint.kind = Endpoint::Kind::Xffl;
    rest = text.substr(7);
  } else {
    size_t scheme = text.find("://");
    bad(source, text,
        scheme == std::string::npos ? std::string("no scheme") : "unknown scheme '" + text.substr(0, scheme) + "'");
  }
  size_t at = rest.find('@');
  if (at != std::string::npos) {
    if (endpoint.kind != Endpoint::Kind::Etcd) bad(source, text, "a user ('@') is only meaningful for etcd:// and etcds://");
    endpoint.user = rest.substr(0, at);
    if (endpoint.user.empty()) bad(source, text, "the user before '@' is empty");
    rest = rest.substr(at + 1);
  } else if (endpoint.kind == Endpoint::Kind::Etcd) {
    endpoint.user = kDefaultEtcdUser;
  }
  if (rest.empty()) bad(source, text, "no member");
  size_t start = 0;
  while (true) {
    size_t comma = rest.find(',', start);
    std::string item = rest.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    endpoint.members.push_back(parse_member(item, source, text));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (endpoint.kind == Endpoint::Kind::Xffl && endpoint.members.size() != 1)
    bad(source, text, "xffl:// names exactly one server, got " + std::to_string(endpoint.members.size()));
  return endpoint;
}

}  // namespace xffl::federation
