#include "federation/curl_api.h"

#ifdef XFFL_HAVE_CURL
#include <string>

#include "common/error.h"
#include "common/lazy_library.h"

namespace xffl::federation::curl {

namespace {

CurlApi open_curl() {
  std::string reason;
  void *handle = open_library({kCurlLibrary}, reason);
  if (!handle)
    fail(XFFL_EUNSUPPORTED, "libcurl could not be loaded (", reason, "): an etcd:// federation needs ", kCurlLibrary,
         " (Debian: libcurl4)");
  // Never closed: libcurl's global state lives as long as the process.
  const SymbolResolver resolve(handle, [](const char *name, const std::string &why) {
    fail(XFFL_EUNSUPPORTED, "libcurl loaded from ", kCurlLibrary, " lacks ", name, " (", why, ")");
  });
  CurlApi api{};
#define XFFL_RESOLVE(name) XFFL_RESOLVE_SYMBOL(resolve, api, name)
  XFFL_RESOLVE(curl_global_init);
  XFFL_RESOLVE(curl_easy_init);
  XFFL_RESOLVE(curl_easy_setopt);
  XFFL_RESOLVE(curl_easy_perform);
  XFFL_RESOLVE(curl_easy_getinfo);
  XFFL_RESOLVE(curl_easy_cleanup);
  XFFL_RESOLVE(curl_easy_strerror);
  XFFL_RESOLVE(curl_slist_append);
  XFFL_RESOLVE(curl_slist_free_all);
#undef XFFL_RESOLVE
  CURLcode rc = api.curl_global_init(CURL_GLOBAL_DEFAULT);
  if (rc != CURLE_OK) fail(XFFL_EUNSUPPORTED, "libcurl's global initialisation failed: ", api.curl_easy_strerror(rc));
  return api;
}

}  // namespace

const CurlApi &curl() { return load_once<CurlApi, open_curl>(); }

}  // namespace xffl::federation::curl

#endif
