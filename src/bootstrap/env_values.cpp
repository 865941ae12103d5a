#include "bootstrap/env_values.h"

#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>

#include "common/error.h"

namespace xffl::bootstrap {

std::string Setting::shown() const {
  if (variable.empty()) return std::to_string(value) + (note.empty() ? "" : " (" + note + ")");
  return variable + "=" + std::to_string(value);
}

std::optional<std::string> lookup(const Environment &env, const std::string &name) {
  auto found = env.find(name);
  if (found == env.end() || found->second.empty()) return std::nullopt;
  return found->second;
}

int parse_count(const std::string &variable, const std::string &text, int minimum) {
  long long value = 0;
  bool digits = !text.empty() && text.size() <= 10;
  for (char c : text) {
    if (c < '0' || c > '9') {
      digits = false;
      break;
    }
    value = value * 10 + (c - '0');
  }
  if (!digits || value > INT_MAX) fail(XFFL_EINVAL, variable, "='", text, "' is not a non-negative integer");
  if (value < minimum) fail(XFFL_EINVAL, variable, "=", value, " must be at least ", minimum);
  return static_cast<int>(value);
}

std::optional<Setting> read_count(const Environment &env, const std::string &variable, int minimum) {
  std::optional<std::string> text = lookup(env, variable);
  if (!text) return std::nullopt;
  return Setting{parse_count(variable, *text, minimum), variable, ""};
}

std::optional<Setting> read_first_count(const Environment &env, std::initializer_list<const char *> variables,
                                        int minimum) {
  for (const char *variable : variables)
    if (std::optional<Setting> setting = read_count(env, variable, minimum)) return setting;
  return std::nullopt;
}

int parse_port(const std::string &variable, const std::string &text) {
  bool digits = !text.empty() && text.size() <= 5;
  for (char c : text) digits = digits && c >= '0' && c <= '9';
  int value = digits ? std::atoi(text.c_str()) : 0;
  if (!digits || value < 1 || value > 65535)
    fail(XFFL_EINVAL, variable, "='", text, "' is not a port (an integer in [1, 65535])");
  return value;
}

std::vector<int> parse_count_list(const std::string &variable, const std::string &text) {
  std::vector<int> values;
  size_t start = 0;
  for (;;) {
    size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    // Allow "4, 8" as people write it; anything else must be digits.
    while (!item.empty() && item.front() == ' ') item.erase(item.begin());
    while (!item.empty() && item.back() == ' ') item.pop_back();
    bool digits = !item.empty() && item.size() <= 10;
    long long value = 0;
    for (char c : item) {
      digits = digits && c >= '0' && c <= '9';
      if (digits) value = value * 10 + (c - '0');
    }
    if (!digits || value < 1 || value > INT_MAX)
      fail(XFFL_EINVAL, variable, "='", text, "' is not a comma-separated list of positive integers");
    values.push_back(static_cast<int>(value));
    if (comma == std::string::npos) return values;
    start = comma + 1;
  }
}

int parse_seconds_as_ms(const std::string &variable, const std::string &text) {
  errno = 0;
  char *end = nullptr;
  double seconds = std::strtod(text.c_str(), &end);
  if (errno || end == text.c_str() || *end != '\0' || !std::isfinite(seconds) || seconds <= 0 || seconds > 2147483.0)
    fail(XFFL_EINVAL, variable, "='", text, "' is not a number of seconds in (0, 2147483]");
  return static_cast<int>(std::ceil(seconds * 1000.0));
}

}  // namespace xffl::bootstrap
