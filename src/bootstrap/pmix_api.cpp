#include "bootstrap/pmix_api.h"

#include <dlfcn.h>

#include <mutex>
#include <string>

#include "common/error.h"

namespace xffl::bootstrap::pmix {

namespace {

std::string last_dl_error() {
  const char *words = dlerror();
  return words ? words : "no reason given";
}

template <typename Function>
void resolve(void *library_handle, const char *library, const char *name, Function &slot) {
  dlerror();  // clears an earlier error, so that a null symbol is told apart from a failed lookup
  void *symbol = dlsym(library_handle, name);
  if (!symbol)
    fail(XFFL_EUNSUPPORTED, "PMIx loaded from ", library, " lacks ", name, " (", last_dl_error(),
         "); xffl needs PMIx 3 or later");
  slot = reinterpret_cast<Function>(symbol);
}

}  // namespace

PmixApi open_pmix(const char *library) {
  // RTLD_NOW: a PMIx missing a symbol it needs fails here, not in the middle of the exchange.
  void *handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    fail(XFFL_EUNSUPPORTED, "PMIx could not be loaded (", last_dl_error(),
         "): the launcher offers PMIx (PMIX_RANK, PMIX_NAMESPACE are set) but the dynamic loader finds no ", library,
         " (Debian: libpmix2); install it, or set MASTER_ADDR and MASTER_PORT to name rank 0's host");
  // Never closed, also after a failure below: closing a library whose constructors ran is not worth it.
  PmixApi api{};
#define XFFL_RESOLVE(name) resolve(handle, library, #name, api.name)
  XFFL_RESOLVE(PMIx_Init);
  XFFL_RESOLVE(PMIx_Finalize);
  XFFL_RESOLVE(PMIx_Put);
  XFFL_RESOLVE(PMIx_Commit);
  XFFL_RESOLVE(PMIx_Fence);
  XFFL_RESOLVE(PMIx_Get);
  XFFL_RESOLVE(PMIx_Error_string);
  XFFL_RESOLVE(PMIx_Value_destruct);
#undef XFFL_RESOLVE
  return api;
}

const PmixApi &pmix() {
  static std::once_flag once;
  static PmixApi api{};
  static bool failed = false;
  static std::string failure;
  std::call_once(once, [] {
    try {
      api = open_pmix(kPmixLibrary);
    } catch (const Error &error) {
      failed = true;
      failure = error.what();
    }
  });
  if (failed) throw Error(XFFL_EUNSUPPORTED, failure);
  return api;
}

}  // namespace xffl::bootstrap::pmix
