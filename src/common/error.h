// The one exception type of xffl's C++ core. capi/ turns it into a status and the thread-local message.
#ifndef XFFL_SRC_COMMON_ERROR_H
#define XFFL_SRC_COMMON_ERROR_H

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

#include "xffl/types.h"

namespace xffl {

class Error : public std::runtime_error {
 public:
  Error(xffl_status_t status, std::string message) : std::runtime_error(std::move(message)), status_(status) {}
  xffl_status_t status() const noexcept { return status_; }

 private:
  xffl_status_t status_;
};

// Builds the message from its pieces: fail(XFFL_EINVAL, "rank ", r, " outside [0, ", w, ")").
template <typename... Parts>
[[noreturn]] void fail(xffl_status_t status, const Parts &...parts) {
  std::ostringstream text;
  (text << ... << parts);
  throw Error(status, text.str());
}

}  // namespace xffl

#endif
