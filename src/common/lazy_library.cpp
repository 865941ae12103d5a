#include "common/lazy_library.h"

#include <dlfcn.h>

namespace xffl {

namespace {

std::string last_dl_error() {
  const char *words = dlerror();
  return words ? words : "no reason given";
}

}  // namespace

void *open_library(std::initializer_list<const char *> sonames, std::string &reason) {
  reason.clear();
  for (const char *soname : sonames) {
    if (void *handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL)) return handle;
    if (!reason.empty()) reason += "; ";
    reason += last_dl_error();
  }
  if (reason.empty()) reason = "no library named";
  return nullptr;
}

void *find_symbol(void *handle, const char *name, std::string &reason) {
  dlerror();  // clears an earlier error, so that a null symbol is told apart from a failed lookup
  void *symbol = dlsym(handle, name);
  if (!symbol) reason = last_dl_error();
  return symbol;
}

}  // namespace xffl
