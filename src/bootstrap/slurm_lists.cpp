#include "bootstrap/slurm_lists.h"

#include <climits>

#include "common/error.h"

namespace xffl::bootstrap {

namespace {

struct Range {
  unsigned long long low, high;
  size_t width;  // digits of the lower bound as written: "003" pads to 3
};

// A host pattern: literal text and bracket groups, alternating. pieces[i] is literal when its ranges
// are empty.
struct Piece {
  std::string literal;
  std::vector<Range> ranges;
};
using Pattern = std::vector<Piece>;

[[noreturn]] void malformed(const std::string &variable, const std::string &text, const std::string &why) {
  fail(XFFL_EINVAL, variable, "='", text, "' is not a SLURM host list: ", why);
}

unsigned long long parse_number(const std::string &digits, const std::string &variable, const std::string &text) {
  if (digits.empty() || digits.size() > 18) malformed(variable, text, "a range bound is not a number");
  unsigned long long value = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') malformed(variable, text, "'" + digits + "' in brackets is not a number");
    value = value * 10 + static_cast<unsigned long long>(c - '0');
  }
  return value;
}

std::vector<Range> parse_brackets(const std::string &inside, const std::string &variable, const std::string &text) {
  std::vector<Range> ranges;
  size_t start = 0;
  for (;;) {
    size_t comma = inside.find(',', start);
    std::string item = inside.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    size_t dash = item.find('-');
    std::string low_text = item.substr(0, dash);
    std::string high_text = dash == std::string::npos ? low_text : item.substr(dash + 1);
    Range range{parse_number(low_text, variable, text), parse_number(high_text, variable, text), low_text.size()};
    if (range.high < range.low) malformed(variable, text, "range '" + item + "' runs backwards");
    ranges.push_back(range);
    if (comma == std::string::npos) return ranges;
    start = comma + 1;
  }
}

// Splits at top-level commas and parses each host pattern.
std::vector<Pattern> parse_hostlist(const std::string &text, const std::string &variable) {
  if (text.empty()) malformed(variable, text, "it is empty");
  std::vector<Pattern> patterns;
  Pattern current;
  std::string literal;
  size_t i = 0;
  auto finish_pattern = [&] {
    if (!literal.empty()) current.push_back({literal, {}});
    literal.clear();
    if (current.empty()) malformed(variable, text, "it has an empty host name");
    patterns.push_back(std::move(current));
    current.clear();
  };
  while (i < text.size()) {
    char c = text[i];
    if (c == ',') {
      finish_pattern();
      ++i;
    } else if (c == '[') {
      size_t close = text.find(']', i);
      if (close == std::string::npos) malformed(variable, text, "a '[' is never closed");
      std::string inside = text.substr(i + 1, close - i - 1);
      if (inside.find('[') != std::string::npos) malformed(variable, text, "brackets are nested");
      if (!literal.empty()) current.push_back({literal, {}});
      literal.clear();
      current.push_back({"", parse_brackets(inside, variable, text)});
      i = close + 1;
    } else if (c == ']') {
      malformed(variable, text, "a ']' has no matching '['");
    } else if (c == ' ') {
      malformed(variable, text, "it contains a space");
    } else {
      literal += c;
      ++i;
    }
  }
  finish_pattern();
  return patterns;
}

std::string padded(unsigned long long value, size_t width) {
  std::string digits = std::to_string(value);
  if (digits.size() < width) digits.insert(0, width - digits.size(), '0');
  return digits;
}

void expand(const Pattern &pattern, size_t piece, std::string prefix, std::vector<std::string> &out, size_t limit,
            const std::string &variable, const std::string &text) {
  if (piece == pattern.size()) {
    if (out.size() >= limit)
      fail(XFFL_EINVAL, variable, " lists more than ", limit, " hosts");
    out.push_back(std::move(prefix));
    return;
  }
  const Piece &current = pattern[piece];
  if (current.ranges.empty()) return expand(pattern, piece + 1, prefix + current.literal, out, limit, variable, text);
  for (const Range &range : current.ranges)
    for (unsigned long long value = range.low; value <= range.high; ++value) {
      expand(pattern, piece + 1, prefix + padded(value, range.width), out, limit, variable, text);
      if (value == ULLONG_MAX) break;
    }
}

}  // namespace

std::vector<std::string> expand_slurm_hostlist(const std::string &text, const std::string &variable, size_t limit) {
  std::vector<std::string> hosts;
  for (const Pattern &pattern : parse_hostlist(text, variable)) expand(pattern, 0, "", hosts, limit, variable, text);
  return hosts;
}

std::string first_slurm_host(const std::string &text, const std::string &variable) {
  std::string host;
  const std::vector<Pattern> patterns = parse_hostlist(text, variable);  // named: front() of a temporary dangles
  for (const Piece &piece : patterns.front())
    host += piece.ranges.empty() ? piece.literal : padded(piece.ranges.front().low, piece.ranges.front().width);
  return host;
}

std::vector<int> expand_slurm_tasks_per_node(const std::string &text, const std::string &variable, size_t limit) {
  auto bad = [&](const std::string &why) {
    fail(XFFL_EINVAL, variable, "='", text, "' is not a SLURM task count list like '4(x2),3': ", why);
  };
  if (text.empty()) bad("it is empty");
  std::vector<int> counts;
  size_t start = 0;
  for (;;) {
    size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    std::string count_text = item;
    unsigned long long repeat = 1;
    size_t open = item.find('(');
    if (open != std::string::npos) {
      if (item.size() < open + 4 || item.compare(open, 2, "(x") != 0 || item.back() != ')')
        bad("'" + item + "' is neither N nor N(xM)");
      std::string repeat_text = item.substr(open + 2, item.size() - open - 3);
      count_text = item.substr(0, open);
      if (repeat_text.empty() || repeat_text.size() > 9 || repeat_text.find_first_not_of("0123456789") != std::string::npos)
        bad("'" + item + "' has a repeat count that is not a number");
      repeat = std::stoull(repeat_text);
      if (repeat == 0) bad("'" + item + "' repeats zero times");
    }
    if (count_text.empty() || count_text.size() > 9 || count_text.find_first_not_of("0123456789") != std::string::npos)
      bad("'" + item + "' does not start with a task count");
    int count = std::stoi(count_text);
    if (counts.size() + repeat > limit) fail(XFFL_EINVAL, variable, " describes more than ", limit, " nodes");
    counts.insert(counts.end(), static_cast<size_t>(repeat), count);
    if (comma == std::string::npos) return counts;
    start = comma + 1;
  }
}

}  // namespace xffl::bootstrap
