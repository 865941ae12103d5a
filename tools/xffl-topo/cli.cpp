#include "cli.h"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <set>

namespace xffl_topo {

namespace {

// A whole decimal int: "12" yes; "", "12x", "1e3" and out-of-range values no. Range checks (positive,
// dividing the world, ...) are the library's job, so its message is what the user sees.
int parse_int(const std::string &flag, const std::string &text) {
  const char *begin = text.c_str();
  char *end = nullptr;
  errno = 0;
  const long value = std::strtol(begin, &end, 10);
  if (text.empty() || *end != '\0' || end == begin)
    throw UsageError(flag + " expects an integer, got '" + text + "'");
  if (errno == ERANGE || value < INT_MIN || value > INT_MAX)
    throw UsageError(flag + " value " + text + " is out of range");
  return static_cast<int>(value);
}

std::vector<int> parse_int_list(const std::string &flag, const std::string &text) {
  std::vector<int> values;
  std::string::size_type start = 0;
  while (true) {
    const auto comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (item.empty()) throw UsageError(flag + " expects F or F1,F2,.. (integers), got '" + text + "'");
    values.push_back(parse_int(flag, item));
    if (comma == std::string::npos) return values;
    start = comma + 1;
  }
}

Format parse_format(const std::string &text) {
  if (text == "text") return Format::Text;
  if (text == "json") return Format::Json;
  if (text == "dot") return Format::Dot;
  if (text == "svg") return Format::Svg;
  throw UsageError("--format expects text, json, dot or svg, got '" + text + "'");
}

}  // namespace

Options parse_command_line(const std::vector<std::string> &args) {
  Options options;
  bool have_world = false;
  std::set<std::string> seen;
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string flag = args[i];
    if (flag == "--help" || flag == "-h") {
      options.help = true;
      return options;
    }
    // Both "--flag value" and "--flag=value".
    std::optional<std::string> inline_value;
    if (const auto eq = flag.find('='); flag.rfind("--", 0) == 0 && eq != std::string::npos) {
      inline_value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
    }
    static const std::set<std::string> known = {"--world", "--node-size", "--hsdp",   "--federated",
                                                "--streams", "--rank",    "--format", "--output"};
    if (!known.count(flag)) throw UsageError("unknown argument '" + args[i] + "' (see --help)");
    if (!seen.insert(flag).second) throw UsageError(flag + " given more than once");
    std::string value;
    if (inline_value) {
      value = *inline_value;
    } else {
      if (i + 1 >= args.size()) throw UsageError(flag + " needs a value");
      value = args[++i];
    }
    if (flag == "--world") {
      options.world = parse_int(flag, value);
      have_world = true;
    } else if (flag == "--node-size") {
      options.node_size = parse_int(flag, value);
    } else if (flag == "--hsdp") {
      options.hsdp = parse_int(flag, value);
    } else if (flag == "--federated") {
      options.federated = parse_int_list(flag, value);
    } else if (flag == "--streams") {
      options.streams = parse_int(flag, value);
    } else if (flag == "--rank") {
      options.rank = parse_int(flag, value);
    } else if (flag == "--format") {
      options.format = parse_format(value);
    } else {  // --output
      if (value.empty()) throw UsageError("--output needs a file name");
      options.output = value;
    }
  }
  if (!have_world) throw UsageError("--world W is required (see --help)");
  return options;
}

const char *usage_text() {
  return "usage: xffl-topo --world W [--node-size L] [--hsdp S] [--federated F|F1,F2,..]\n"
         "                 [--streams K] [--rank R] [--format text|json|dot|svg] [--output FILE]\n"
         "\n"
         "Plans every rank of an xffl job (or only rank R) with no process started, through the same\n"
         "library calls a training process makes, and prints the plan.\n"
         "\n"
         "  --world W           number of processes (required)\n"
         "  --node-size L       ranks per node (torchrun: node_local_rank = r mod L, node_rank = r div L)\n"
         "  --hsdp S            HSDP with replicas of S ranks (S shards per replica); 0: no HSDP\n"
         "  --federated F       federated groups (facilities) of F processes each, W/F of them\n"
         "  --federated F1,F2.. federated groups of the given sizes (unequal sizes need --hsdp)\n"
         "  --streams K         K instances of the FEDERATED and REPLICA groups (default 1)\n"
         "  --rank R            only rank R (text: its full state, json: its object; dot/svg: highlighted)\n"
         "  --format FORMAT     text (default): summary, mesh picture and one row per rank\n"
         "                      json: one object per rank, keys are the DistributedState field names\n"
         "                      dot: graphviz source; svg: a picture of facilities, meshes and senders\n"
         "  --output FILE       write to FILE instead of standard output\n"
         "  -h, --help          this text\n"
         "\n"
         "Without --federated and --hsdp (or with --hsdp 0) the layout is FSDP over the whole world.\n"
         "Exit status: 0 on success, 2 on a bad command line or a layout the library rejects.\n"
         "\n"
         "example: xffl-topo --world 8 --federated 2,6 --hsdp 2\n";
}

}  // namespace xffl_topo
