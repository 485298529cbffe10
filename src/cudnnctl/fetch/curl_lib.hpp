// SPDX-License-Identifier: Apache-2.0
// libcurl's functions, reached through one table that is filled when first needed (systemd's
// dlopen-on-demand, src/shared/dlfcn-util.h). In the developer build (CUDNNCTL_CURL_DLOPEN)
// the table comes from dlopen("libcurl.so.4"): a command that fetches nothing (rollback, use,
// list, check) does not map a distribution's libcurl and the 30-odd libraries it brings
// (GnuTLS, Kerberos, LDAP, ...: 14 ms of a 58 ms rollback, docs/BENCHMARKS.md). The portable
// release links its static libcurl: there the table holds those functions directly.
// Only fetch/ includes this header.
#pragma once

#include "core/result.hpp"

#include <curl/curl.h>

namespace cudnnctl::fetch {

// --- Interface ---

struct CurlLib {
  decltype(&curl_global_init) global_init = nullptr;
  decltype(&curl_easy_init) easy_init = nullptr;
  decltype(&curl_easy_setopt) easy_setopt = nullptr;
  decltype(&curl_easy_perform) easy_perform = nullptr;
  decltype(&curl_easy_getinfo) easy_getinfo = nullptr;
  decltype(&curl_easy_strerror) easy_strerror = nullptr;
  decltype(&curl_easy_cleanup) easy_cleanup = nullptr;
  decltype(&curl_version_info) version_info = nullptr;
};

// The table, loaded once (thread-safe), with curl_global_init already run. Throws
// std::runtime_error naming the library and dlerror()'s reason when libcurl cannot be loaded or
// lacks one of the functions, or when curl_global_init fails.
const CurlLib& curl_lib();

// Loads the table now: ErrorCode::environment with curl_lib()'s reason (what to install) when
// it cannot. Called before a CurlHandle is made, so a missing libcurl is a one-line error of
// the download that needs it, not an internal one.
[[nodiscard]] Status curl_ready();

} // namespace cudnnctl::fetch
