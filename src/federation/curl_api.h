// libcurl, loaded at run time (as UCX and PMIx are): libxffl does not link it, so a job that never
// names an etcd federation needs no libcurl at all. The build needs curl's headers (Debian:
// libcurl4-openssl-dev) for the declarations and constants; without them XFFL_HAVE_CURL is unset and
// an etcd:// endpoint reports that this build lacks it.
#ifndef XFFL_SRC_FEDERATION_CURL_API_H
#define XFFL_SRC_FEDERATION_CURL_API_H

#ifdef XFFL_HAVE_CURL
#include <curl/curl.h>

namespace xffl::federation::curl {

constexpr const char *kCurlLibrary = "libcurl.so.4";

struct CurlApi {
  decltype(&::curl_global_init) curl_global_init;
  decltype(&::curl_easy_init) curl_easy_init;
  decltype(&::curl_easy_setopt) curl_easy_setopt;
  decltype(&::curl_easy_perform) curl_easy_perform;
  decltype(&::curl_easy_getinfo) curl_easy_getinfo;
  decltype(&::curl_easy_cleanup) curl_easy_cleanup;
  decltype(&::curl_easy_strerror) curl_easy_strerror;
  decltype(&::curl_slist_append) curl_slist_append;
  decltype(&::curl_slist_free_all) curl_slist_free_all;
};

// The process's libcurl, loaded and globally initialised once; throws xffl::Error(XFFL_EUNSUPPORTED)
// saying what is missing when it cannot be loaded.
const CurlApi &curl();

}  // namespace xffl::federation::curl

#endif
#endif
