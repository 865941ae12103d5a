// PMIx, loaded at run time the first time a job's store address is exchanged through it, and the one
// table of PMIx functions that xffl calls (every PMIx_ call of bootstrap/pmix_store.cpp goes through
// pmix()).
//
// libxffl is compiled against PMIx's headers (Debian libpmix-dev) but does not link PMIx: a process
// that never meets a PMIx launcher (torchrun, xffl-run, srun without --mpi=pmix, explicit
// MASTER_ADDR) neither needs libpmix nor pays for loading it, and an installed libxffl starts on a host
// without PMIx. Loaded once per process (std::call_once), RTLD_LOCAL, and never unloaded (PMIx keeps a
// progress thread while initialized). An MPI library that loaded PMIx before makes dlopen return the
// same library, so both share one client (PMIx_Init and PMIx_Finalize count their calls). A failed
// load is remembered and reported to every later caller in the same words.
#ifndef XFFL_SRC_BOOTSTRAP_PMIX_API_H
#define XFFL_SRC_BOOTSTRAP_PMIX_API_H

#include <pmix.h>

namespace xffl::bootstrap::pmix {

// The functions, by their PMIx names, typed from PMIx's own declarations.
struct PmixApi {
  decltype(&::PMIx_Init) PMIx_Init;
  decltype(&::PMIx_Finalize) PMIx_Finalize;
  decltype(&::PMIx_Put) PMIx_Put;
  decltype(&::PMIx_Commit) PMIx_Commit;
  decltype(&::PMIx_Fence) PMIx_Fence;
  decltype(&::PMIx_Get) PMIx_Get;
  decltype(&::PMIx_Error_string) PMIx_Error_string;
  decltype(&::PMIx_Value_destruct) PMIx_Value_destruct;
};

// The soname xffl loads: PMIx's ABI major version 2 (PMIx 3.x to 5.x, Debian libpmix2).
inline constexpr const char *kPmixLibrary = "libpmix.so.2";

// PMIx, loaded on the first call. Throws xffl::Error XFFL_EUNSUPPORTED when PMIx cannot be loaded or
// lacks a function, with dlerror()'s words; the same error on every later call.
const PmixApi &pmix();

// Loads `library` and resolves the table from it. pmix() calls it once with kPmixLibrary; tests call
// it with names that fail. Throws like pmix().
PmixApi open_pmix(const char *library);

}  // namespace xffl::bootstrap::pmix

#endif
