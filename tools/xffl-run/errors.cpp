#include "errors.h"

#include <cstring>

namespace xffl_run {

SystemError::SystemError(const std::string& what_failed, int err)
    : std::runtime_error(what_failed + ": " + std::strerror(err)) {}

}  // namespace xffl_run
