#include "common/format.h"

namespace xffl {

namespace {
std::string join(const std::vector<int> &values) {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(values[i]);
  }
  return out;
}
}  // namespace

std::string python_tuple(const std::vector<int> &values) {
  if (values.size() == 1) return "(" + std::to_string(values[0]) + ",)";
  return "(" + join(values) + ")";
}

std::string python_list(const std::vector<int> &values) { return "[" + join(values) + "]"; }

std::string english_list(const std::vector<int> &values, const char *conjunction) {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += (i + 1 == values.size()) ? std::string(" ") + conjunction + " " : ", ";
    out += std::to_string(values[i]);
  }
  return out;
}

}  // namespace xffl
