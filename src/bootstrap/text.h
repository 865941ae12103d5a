// Phrases shared by the store's messages.
#ifndef XFFL_SRC_BOOTSTRAP_TEXT_H
#define XFFL_SRC_BOOTSTRAP_TEXT_H

#include <cstdint>
#include <string>
#include <vector>

namespace xffl::bootstrap {

// "rank 3", "ranks 2 and 5", "ranks 1, 2 and 5"; beyond 16 ranks the rest is counted, not listed.
std::string ranks_phrase(const std::vector<uint32_t> &ranks);

// "127.0.0.1:29500", "[::1]:29500".
std::string host_port(const std::string &host, int port);

}  // namespace xffl::bootstrap

#endif
