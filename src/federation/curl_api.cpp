#include "federation/curl_api.h"

#ifdef XFFL_HAVE_CURL
#include <dlfcn.h>

#include <mutex>
#include <string>

#include "common/error.h"

namespace xffl::federation::curl {

namespace {

std::string last_dl_error() {
  const char *words = dlerror();
  return words ? words : "no reason given";
}

template <typename Function>
void resolve(void *handle, const char *name, Function &slot) {
  dlerror();
  void *symbol = dlsym(handle, name);
  if (!symbol) fail(XFFL_EUNSUPPORTED, "libcurl loaded from ", kCurlLibrary, " lacks ", name, " (", last_dl_error(), ")");
  slot = reinterpret_cast<Function>(symbol);
}

CurlApi open_curl() {
  void *handle = dlopen(kCurlLibrary, RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    fail(XFFL_EUNSUPPORTED, "libcurl could not be loaded (", last_dl_error(), "): an etcd:// federation needs ",
         kCurlLibrary, " (Debian: libcurl4)");
  // Never closed: libcurl's global state lives as long as the process.
  CurlApi api{};
#define XFFL_RESOLVE(name) resolve(handle, #name, api.name)
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

const CurlApi &curl() {
  static std::once_flag once;
  static CurlApi api{};
  static bool failed = false;
  static std::string failure;
  std::call_once(once, [] {
    try {
      api = open_curl();
    } catch (const Error &error) {
      failed = true;
      failure = error.what();
    }
  });
  if (failed) throw Error(XFFL_EUNSUPPORTED, failure);
  return api;
}

}  // namespace xffl::federation::curl

#endif
