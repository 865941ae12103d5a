#include "bootstrap/text.h"

namespace xffl::bootstrap {

std::string ranks_phrase(const std::vector<uint32_t> &ranks) {
  if (ranks.empty()) return "no rank";
  if (ranks.size() == 1) return "rank " + std::to_string(ranks[0]);
  constexpr size_t kListed = 16;
  std::string out = "ranks ";
  if (ranks.size() > kListed) {
    for (size_t i = 0; i < kListed; ++i) out += std::to_string(ranks[i]) + ", ";
    return out + "and " + std::to_string(ranks.size() - kListed) + " more";
  }
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (i > 0) out += i + 1 == ranks.size() ? " and " : ", ";
    out += std::to_string(ranks[i]);
  }
  return out;
}

std::string host_port(const std::string &host, int port) {
  if (host.find(':') != std::string::npos) return "[" + host + "]:" + std::to_string(port);
  return host + ":" + std::to_string(port);
}

}  // namespace xffl::bootstrap
