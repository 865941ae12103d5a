#include "common/environment.h"

#include <cstdlib>
#include <cstring>

extern char **environ;

namespace xffl {

Environment process_environment() {
  Environment env;
  for (char **entry = environ; entry && *entry; ++entry) {
    const char *text = *entry;
    const char *equals = std::strchr(text, '=');
    if (!equals) continue;
    env.emplace(std::string(text, static_cast<size_t>(equals - text)), std::string(equals + 1));
  }
  return env;
}

Environment process_environment(const std::vector<const char *> &names) {
  Environment env;
  for (const char *name : names)
    if (const char *value = std::getenv(name)) env.emplace(name, value);
  return env;
}

bool process_environment_has(const char *name) { return std::getenv(name) != nullptr; }

}  // namespace xffl
