// Command line of xffl-topo (DESIGN.md section 6): parsed into Options, or a UsageError naming the
// flag and the value that is wrong.
#ifndef XFFL_TOOLS_TOPO_CLI_H
#define XFFL_TOOLS_TOPO_CLI_H

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace xffl_topo {

enum class Format { Text, Json, Dot, Svg };

struct Options {
  int world = 0;
  std::optional<int> node_size;
  std::optional<int> hsdp;
  std::vector<int> federated;  // empty: no federated scaling
  int streams = 1;
  std::optional<int> rank;  // plan (or highlight) this rank only
  Format format = Format::Text;
  std::string output;  // empty: standard output
  bool help = false;
};

// Bad command line (unknown flag, missing or malformed value). The message has no "xffl-topo:" prefix.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

Options parse_command_line(const std::vector<std::string> &args);

const char *usage_text();

}  // namespace xffl_topo

#endif
