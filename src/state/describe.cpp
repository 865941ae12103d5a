// DistributedState::describe: the text of xFFL's __str__ and a JSON object with the same fields, both
// printed from the field table (state/fields.h).
#include <sstream>
#include <string>
#include <vector>

#include "common/error.h"
#include "state/distributed_state.h"
#include "state/fields.h"

namespace xffl {

std::string DistributedState::describe(xffl_format_t format) const {
  if (format != XFFL_FORMAT_TEXT && format != XFFL_FORMAT_JSON)
    fail(XFFL_EINVAL, "unknown format ", static_cast<int>(format), " (XFFL_FORMAT_TEXT or XFFL_FORMAT_JSON)");
  std::vector<int> live;
  const fields::Source source = field_source(live);
  std::ostringstream out;
  if (format == XFFL_FORMAT_JSON) {
    out << "{";
    bool first = true;
    for (const fields::Field &field : fields::table()) {
      if (!field.section) continue;
      out << (first ? "" : ", ") << "\"" << field.name << "\": " << field.read(source).json();
      first = false;
    }
    out << "}";
    return out.str();
  }
  const std::string banner = std::string(16, ' ') + "*** xFFL Distributed Setup ***";
  out << "\n\n" << banner << "\n\n";
  const char *section = nullptr;
  for (const fields::Field &field : fields::table()) {
    if (!field.section) continue;
    if (!section || std::string(section) != field.section) {
      section = field.section;
      std::string header = std::string(section) + " ";
      header += std::string(57 - header.size(), '-');
      out << std::string(8, ' ') << header << "\n";
    }
    out << std::string(20, ' ') << field.label << field.read(source).python() << "\n";
  }
  out << "\n" << banner << "\n" << std::string(16, ' ');
  return out.str();
}

}  // namespace xffl
