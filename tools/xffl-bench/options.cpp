#include "options.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>
#include <utility>

namespace xffl_bench {
namespace {

template <typename Enum>
using Names = std::vector<std::pair<const char *, Enum>>;

const Names<Operation> &operations() {
  static const Names<Operation> names = {{"allreduce", Operation::allreduce},
                                         {"broadcast", Operation::broadcast},
                                         {"allgather", Operation::allgather},
                                         {"reduce_scatter", Operation::reduce_scatter},
                                         {"federated_average", Operation::federated_average}};
  return names;
}

const Names<xffl_dtype_t> &dtypes() {
  static const Names<xffl_dtype_t> names = {{"f32", XFFL_F32}, {"f64", XFFL_F64}, {"f16", XFFL_F16},
                                            {"bf16", XFFL_BF16}, {"i8", XFFL_I8},   {"u8", XFFL_U8},
                                            {"i32", XFFL_I32},   {"i64", XFFL_I64}};
  return names;
}

const Names<xffl_redop_t> &redops() {
  static const Names<xffl_redop_t> names = {
      {"sum", XFFL_SUM}, {"avg", XFFL_AVG}, {"min", XFFL_MIN}, {"max", XFFL_MAX}, {"prod", XFFL_PROD}};
  return names;
}

const Names<xffl_group_kind_t> &groups() {
  static const Names<xffl_group_kind_t> names = {
      {"WORLD", XFFL_GROUP_WORLD},         {"FSDP", XFFL_GROUP_FSDP},
      {"HSDP_REPLICA", XFFL_GROUP_HSDP_REPLICA}, {"HSDP_SHARD", XFFL_GROUP_HSDP_SHARD},
      {"FEDERATED", XFFL_GROUP_FEDERATED}, {"REPLICA", XFFL_GROUP_REPLICA},
      {"FEDERATION", XFFL_GROUP_FEDERATION}};
  return names;
}

template <typename Enum>
Enum lookup(const Names<Enum> &names, const std::string &option, const std::string &text, bool upper) {
  std::string key = text;
  for (char &c : key) c = upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c)))
                                : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::string choices;
  for (const auto &[name, value] : names) {
    if (key == name) return value;
    choices += choices.empty() ? name : std::string("|") + name;
  }
  throw UsageError(option + " expects " + choices + ", got '" + text + "'");
}

template <typename Enum>
const char *name_of(const Names<Enum> &names, Enum value) {
  for (const auto &[name, v] : names)
    if (v == value) return name;
  return "?";
}

int parse_count(const std::string &option, const std::string &text, int minimum) {
  char *end = nullptr;
  errno = 0;
  long value = text.empty() ? -1 : std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE || value < minimum || value > 1000000000L)
    throw UsageError(option + " expects a whole number >= " + std::to_string(minimum) + ", got '" + text + "'");
  return static_cast<int>(value);
}

double parse_factor(const std::string &option, const std::string &text) {
  char *end = nullptr;
  double value = text.empty() ? NAN : std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !std::isfinite(value) || value <= 1.0)
    throw UsageError(option + " expects a number greater than 1, got '" + text + "'");
  return value;
}

}  // namespace

size_t parse_size(const std::string &option, const std::string &text) {
  std::string digits = text;
  if (!digits.empty() && (digits.back() == 'B' || digits.back() == 'b')) digits.pop_back();
  size_t multiplier = 1;
  if (!digits.empty()) {
    switch (std::toupper(static_cast<unsigned char>(digits.back()))) {
      case 'K': multiplier = size_t{1} << 10; break;
      case 'M': multiplier = size_t{1} << 20; break;
      case 'G': multiplier = size_t{1} << 30; break;
      default: break;
    }
    if (multiplier != 1) digits.pop_back();
  }
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos)
    throw UsageError(option + " expects a size in bytes such as 1024, 64K, 16M or 1G, got '" + text + "'");
  errno = 0;
  unsigned long long value = std::strtoull(digits.c_str(), nullptr, 10);
  if (errno == ERANGE || value > (size_t{1} << 40) / multiplier)
    throw UsageError(option + " size '" + text + "' is too large (at most 1T)");
  return static_cast<size_t>(value) * multiplier;
}

std::vector<size_t> size_sequence(const Options &opts) {
  std::vector<size_t> sizes;
  for (size_t size = opts.min_bytes; size <= opts.max_bytes;) {
    sizes.push_back(size);
    // At least one byte more, so that 0 and factors close to 1 still move on.
    size = std::max(static_cast<size_t>(static_cast<double>(size) * opts.factor), size + 1);
  }
  return sizes;
}

Options parse_options(int argc, const char *const *argv) {
  Options opts;
  using Setter = std::function<void(const std::string &option, const std::string &value)>;
  const std::map<std::string, Setter> with_value = {
      {"-b", [&](const std::string &o, const std::string &v) { opts.min_bytes = parse_size(o, v); }},
      {"-e", [&](const std::string &o, const std::string &v) { opts.max_bytes = parse_size(o, v); }},
      {"-f", [&](const std::string &o, const std::string &v) { opts.factor = parse_factor(o, v); }},
      {"-o", [&](const std::string &o, const std::string &v) { opts.op = lookup(operations(), o, v, false); }},
      {"-d", [&](const std::string &o, const std::string &v) { opts.dtype = lookup(dtypes(), o, v, false); }},
      {"-r", [&](const std::string &o, const std::string &v) { opts.redop = lookup(redops(), o, v, false); }},
      {"-n", [&](const std::string &o, const std::string &v) { opts.iters = parse_count(o, v, 1); }},
      {"-w", [&](const std::string &o, const std::string &v) { opts.warmup = parse_count(o, v, 0); }},
      {"-g", [&](const std::string &o, const std::string &v) { opts.group = lookup(groups(), o, v, true); }},
      {"-i", [&](const std::string &o, const std::string &v) { opts.instance = parse_count(o, v, 0); }},
  };
  // Long spellings of the same options.
  const std::map<std::string, std::string> aliases = {
      {"--minbytes", "-b"}, {"--maxbytes", "-e"}, {"--stepfactor", "-f"}, {"--op", "-o"},
      {"--datatype", "-d"}, {"--redop", "-r"},    {"--iters", "-n"},      {"--warmup_iters", "-w"},
      {"--warmup", "-w"},   {"--group", "-g"},    {"--instance", "-i"}};

  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      opts.show_help = true;
      return opts;
    }
    if (arg == "--check" || arg == "-c") {
      opts.check = true;
      continue;
    }
    if (arg == "--json") {
      opts.json = true;
      continue;
    }
    if (arg == "--hugepages") {
      opts.hugepages = true;
      continue;
    }
    std::string name = arg;
    std::string value;
    bool has_value = false;
    if (arg.rfind("--", 0) == 0 && arg.find('=') != std::string::npos) {  // --op=allreduce
      name = arg.substr(0, arg.find('='));
      value = arg.substr(arg.find('=') + 1);
      has_value = true;
    }
    if (auto alias = aliases.find(name); alias != aliases.end()) name = alias->second;
    auto setter = with_value.find(name);
    if (setter == with_value.end()) throw UsageError("unknown option '" + arg + "' (see xffl-bench --help)");
    if (!has_value) {
      if (i + 1 >= argc) throw UsageError(arg + " needs a value");
      value = argv[++i];
    }
    setter->second(name, value);
  }
  if (opts.max_bytes < opts.min_bytes)
    throw UsageError("-e " + std::to_string(opts.max_bytes) + " is smaller than -b " + std::to_string(opts.min_bytes));
  if (opts.op == Operation::federated_average && opts.group != XFFL_GROUP_WORLD)
    throw UsageError("-o federated_average works on the whole job; -g does not apply");
  return opts;
}

const char *usage_text() {
  return "usage: xffl-run -n N [launcher options] -- xffl-bench [options]\n"
         "\n"
         "Collective benchmark in the style of nccl-tests, through xffl's public C API. The state comes\n"
         "from the launcher's environment (xffl_state_from_env); rank 0 prints.\n"
         "\n"
         "  -b, --minbytes SIZE     smallest message, bytes with optional K/M/G suffix (default 32M)\n"
         "  -e, --maxbytes SIZE     largest message (default 32M)\n"
         "  -f, --stepfactor F      multiply the size by F between rows (default 2)\n"
         "  -o, --op OP             allreduce | broadcast | allgather | reduce_scatter | federated_average\n"
         "  -d, --datatype T        f32 | f64 | f16 | bf16 | i8 | u8 | i32 | i64 (default f32)\n"
         "  -r, --redop OP          sum | avg | min | max | prod (default sum)\n"
         "  -n, --iters N           timed iterations per size (default 20)\n"
         "  -w, --warmup N          untimed iterations before them (default 5)\n"
         "  -g, --group KIND        WORLD | FSDP | HSDP_REPLICA | HSDP_SHARD | FEDERATED | REPLICA | FEDERATION\n"
         "  -i, --instance K        stream instance of FEDERATED / REPLICA (default 0)\n"
         "  -c, --check             verify the results of one extra run per size (column #wrong)\n"
         "      --json              print one JSON document instead of the table\n"
         "      --hugepages         back the buffers with transparent huge pages (madvise), as an\n"
         "                          application may; fewer pages for the kernel to pin in CMA copies\n"
         "\n"
         "SIZE is the size of the whole result in bytes, as in nccl-tests: for allgather the gathered\n"
         "buffer, for reduce_scatter the input. time = per-iteration time of each rank (barrier, then N\n"
         "back-to-back calls), averaged over the ranks (--json adds the max and the CPU time per call).\n"
         "algbw = size / time;\n"
         "busbw = algbw * 2(n-1)/n (allreduce, federated_average over n federated groups),\n"
         "(n-1)/n (allgather, reduce_scatter), 1 (broadcast); n = members of the group.\n";
}

const char *operation_name(Operation op) { return name_of(operations(), op); }
const char *dtype_name(xffl_dtype_t dtype) { return name_of(dtypes(), dtype); }
const char *redop_name(xffl_redop_t redop) { return name_of(redops(), redop); }
const char *group_name(xffl_group_kind_t kind) { return name_of(groups(), kind); }

size_t dtype_size(xffl_dtype_t dtype) {
  switch (dtype) {
    case XFFL_F64: case XFFL_I64: return 8;
    case XFFL_F32: case XFFL_I32: return 4;
    case XFFL_F16: case XFFL_BF16: return 2;
    default: return 1;
  }
}

}  // namespace xffl_bench
