// SPDX-License-Identifier: Apache-2.0
#include "fetch/curl_lib.hpp"

#include <stdexcept>
#include <string>

#ifdef CUDNNCTL_CURL_DLOPEN
#include <dlfcn.h>
#endif

namespace cudnnctl::fetch {

namespace {

#ifdef CUDNNCTL_CURL_DLOPEN

// libcurl's soname since 7.16 (2006). RTLD_NOW: a missing function fails here, once, and not
// in the middle of a transfer. Never unloaded (libcurl keeps global state).
constexpr const char* k_libcurl = "libcurl.so.4";

template <typename F> void resolve(void* handle, const char* name, F& out) {
  out = reinterpret_cast<F>(::dlsym(handle, name));
  if (out == nullptr) {
    throw std::runtime_error(std::string(k_libcurl) + " lacks " + name +
                             " (libcurl 7.85 or newer is needed)");
  }
}

CurlLib load() {
  void* handle = ::dlopen(k_libcurl, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    throw std::runtime_error("cannot load " + std::string(k_libcurl) + " (" +
                             (why ? why : "unknown reason") +
                             "): install libcurl (Debian/Ubuntu: libcurl4, RHEL: libcurl)");
  }
  CurlLib lib;
  resolve(handle, "curl_global_init", lib.global_init);
  resolve(handle, "curl_easy_init", lib.easy_init);
  resolve(handle, "curl_easy_setopt", lib.easy_setopt);
  resolve(handle, "curl_easy_perform", lib.easy_perform);
  resolve(handle, "curl_easy_getinfo", lib.easy_getinfo);
  resolve(handle, "curl_easy_strerror", lib.easy_strerror);
  resolve(handle, "curl_easy_cleanup", lib.easy_cleanup);
  resolve(handle, "curl_version_info", lib.version_info);
  return lib;
}

#else

// Linked in (the portable release's static libcurl). The names without parentheses are the
// functions, not the type-checking macros of curl/typecheck-gcc.h.
CurlLib load() {
  return CurlLib{.global_init = &curl_global_init,
                 .easy_init = &curl_easy_init,
                 .easy_setopt = &curl_easy_setopt,
                 .easy_perform = &curl_easy_perform,
                 .easy_getinfo = &curl_easy_getinfo,
                 .easy_strerror = &curl_easy_strerror,
                 .easy_cleanup = &curl_easy_cleanup,
                 .version_info = &curl_version_info};
}

#endif

// The table, and libcurl's global set-up (curl_global_init, OpenSSL's too) run once with it: a
// command that downloads nothing pays for neither, nor for their exit handlers.
CurlLib load_and_init() {
  CurlLib lib = load();
  if (lib.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
    throw std::runtime_error("curl_global_init failed (out of memory?)");
  }
  return lib;
}

} // namespace

const CurlLib& curl_lib() {
  static const CurlLib lib = load_and_init(); // a throw leaves it unset: the next call tries again
  return lib;
}

Status curl_ready() {
  try {
    (void)curl_lib();
  } catch (const std::exception& e) {
    return fail(ErrorCode::environment, e.what());
  }
  return {};
}

} // namespace cudnnctl::fetch
