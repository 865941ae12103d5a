#include "bootstrap/pmix_api.h"

#include <string>

#include "common/error.h"
#include "common/lazy_library.h"

namespace xffl::bootstrap::pmix {

namespace {

PmixApi open_installed_pmix() { return open_pmix(kPmixLibrary); }

}  // namespace

PmixApi open_pmix(const char *library) {
  std::string reason;
  void *handle = open_library({library}, reason);
  if (!handle)
    fail(XFFL_EUNSUPPORTED, "PMIx could not be loaded (", reason,
         "): the launcher offers PMIx (PMIX_RANK, PMIX_NAMESPACE are set) but the dynamic loader finds no ", library,
         " (Debian: libpmix2); install it, or set MASTER_ADDR and MASTER_PORT to name rank 0's host");
  // Never closed, also after a failure below: closing a library whose constructors ran is not worth it.
  const SymbolResolver resolve(handle, [library](const char *name, const std::string &why) {
    fail(XFFL_EUNSUPPORTED, "PMIx loaded from ", library, " lacks ", name, " (", why, "); xffl needs PMIx 3 or later");
  });
  PmixApi api{};
#define XFFL_RESOLVE(name) XFFL_RESOLVE_SYMBOL(resolve, api, name)
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

const PmixApi &pmix() { return load_once<PmixApi, open_installed_pmix>(); }

}  // namespace xffl::bootstrap::pmix
