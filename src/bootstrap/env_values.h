// Reading single launcher variables strictly, remembering which variable said what, so that errors
// can quote it: "RANK=5 but WORLD_SIZE=4", "MASTER_PORT='abc' is not a port".
#ifndef XFFL_SRC_BOOTSTRAP_ENV_VALUES_H
#define XFFL_SRC_BOOTSTRAP_ENV_VALUES_H

#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "common/environment.h"

namespace xffl::bootstrap {

// Variable name -> value (common/environment.h). A variable set to the empty string counts as unset.
using xffl::Environment;

// An integer together with the variable it came from.
struct Setting {
  int value = 0;
  std::string variable;  // "RANK"; empty for a value derived rather than read
  std::string note;      // how a derived value was obtained ("from OMPI_COMM_WORLD_SIZE / ...")

  // "RANK=5", or "5 (note)" for a derived value.
  std::string shown() const;
};

std::optional<std::string> lookup(const Environment &env, const std::string &name);

// A non-negative decimal integer at least `minimum`; throws xffl::Error(XFFL_EINVAL) naming the
// variable ("LOCAL_RANK='x' is not a non-negative integer", "WORLD_SIZE=0 must be at least 1").
int parse_count(const std::string &variable, const std::string &text, int minimum);
std::optional<Setting> read_count(const Environment &env, const std::string &variable, int minimum);
// The first of several variables that is set.
std::optional<Setting> read_first_count(const Environment &env, std::initializer_list<const char *> variables,
                                        int minimum);

// 1..65535: "MASTER_PORT='abc' is not a port".
int parse_port(const std::string &variable, const std::string &text);

// "4,8" or "4": positive integers separated by commas.
std::vector<int> parse_count_list(const std::string &variable, const std::string &text);

// Seconds, possibly fractional, in (0, 2147483]; returns milliseconds (rounded up).
int parse_seconds_as_ms(const std::string &variable, const std::string &text);

}  // namespace xffl::bootstrap

#endif
