// Small text helpers shared by messages, describe() and the tools: "(4, 8)", "[0, 1, 2]".
#ifndef XFFL_SRC_COMMON_FORMAT_H
#define XFFL_SRC_COMMON_FORMAT_H

#include <string>
#include <vector>

namespace xffl {

// Python's str() of a tuple of ints: "(4, 8)", "(4,)", "()".
std::string python_tuple(const std::vector<int> &values);

// Python's str() of a list of ints: "[0, 1, 2]".
std::string python_list(const std::vector<int> &values);

// "1, 2 or 4" for a short English enumeration.
std::string english_list(const std::vector<int> &values, const char *conjunction = "or");

}  // namespace xffl

#endif
