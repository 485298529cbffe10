// SPDX-License-Identifier: Apache-2.0
#include "fetch/curl_handle.hpp"

#include "fetch/classify.hpp"
#include "fetch/curl_lib.hpp"

#include <filesystem>
#include <stdexcept>
#include <system_error>

#ifndef CUDNNCTL_VERSION
#error "CUDNNCTL_VERSION must be defined by the build"
#endif

namespace cudnnctl::fetch {

// libcurl is loaded and set up by the first handle (curl_lib()), not at start-up.
CurlHandle::CurlHandle() : m_handle(curl_lib().easy_init()) {
  if (!m_handle) {
    throw std::runtime_error("curl_easy_init failed (out of memory?)");
  }
  // Set once: libcurl keeps this pointer for the handle's lifetime (hence non-movable).
  if (curl_lib().easy_setopt(m_handle.get(), CURLOPT_ERRORBUFFER, m_error.data()) != CURLE_OK) {
    throw std::runtime_error("libcurl rejected CURLOPT_ERRORBUFFER");
  }
  // Receive buffer: 512 KiB (libcurl's default is 16 KiB) makes 32 times fewer write
  // callbacks for a 346 MB archive, each a cache-file write(2), a hash copy and a pipe hand-off
  // on the download's thread (docs/BENCHMARKS.md). Set once, before the first transfer (libcurl
  // refuses to resize a buffer in use); 512 KiB is the most every libcurl since 7.10 accepts.
  // Advisory: a libcurl that refuses it keeps its default.
  (void)curl_lib().easy_setopt(m_handle.get(), CURLOPT_BUFFERSIZE, 512L * 1024L);
}

namespace {
// Collects the first failing curl_easy_setopt so prepare() can report it by name.
struct OptionCheck {
  CURLcode code = CURLE_OK;
  const char* name = nullptr;
  void operator()(CURLcode rc, const char* what) {
    if (rc != CURLE_OK && code == CURLE_OK) {
      code = rc;
      name = what;
    }
  }
};
} // namespace

#define CUDNNCTL_SETOPT(check, handle, option, value)                                              \
  check(curl_lib().easy_setopt(handle, option, value), #option)

Status CurlHandle::prepare(const std::string& url, const Options& options, uint64_t resume_from,
                           const CurlCallbacks& callbacks) {
  CURL* h = m_handle.get();
  OptionCheck check;
  CUDNNCTL_SETOPT(check, h, CURLOPT_URL, url.c_str());
  // Only these schemes, both for the URL given and (below) for redirects: no ftp, no
  // scp, no gopher from a hostile mirror.
  CUDNNCTL_SETOPT(check, h, CURLOPT_PROTOCOLS_STR, "http,https,file");
  CUDNNCTL_SETOPT(check, h, CURLOPT_FOLLOWLOCATION, 1L);
  CUDNNCTL_SETOPT(check, h, CURLOPT_MAXREDIRS, static_cast<long>(options.max_redirects));
  // An https download may only be redirected to https; plain http may go to either.
  CUDNNCTL_SETOPT(check, h, CURLOPT_REDIR_PROTOCOLS_STR, redirect_protocols(url).c_str());
  CUDNNCTL_SETOPT(
      check, h, CURLOPT_CONNECTTIMEOUT_MS,
      static_cast<long>(
          std::chrono::duration_cast<std::chrono::milliseconds>(options.connect_timeout).count()));
  // A stalled transfer (below low_speed_limit for low_speed_time) ends with
  // CURLE_OPERATION_TIMEDOUT, which we retry with resume. No total timeout for archives: they
  // are large and links slow.
  // Only when the caller set a deadline (manifests); 0 clears one left by an earlier transfer.
  CUDNNCTL_SETOPT(check, h, CURLOPT_TIMEOUT_MS, static_cast<long>(options.attempt_timeout.count()));
  CUDNNCTL_SETOPT(check, h, CURLOPT_LOW_SPEED_LIMIT, options.low_speed_limit);
  CUDNNCTL_SETOPT(check, h, CURLOPT_LOW_SPEED_TIME,
                  static_cast<long>(options.low_speed_time.count()));
  // We classify statuses ourselves (404 vs 503 vs 416 on resume); FAILONERROR would hide them.
  CUDNNCTL_SETOPT(check, h, CURLOPT_FAILONERROR, 0L);
  // No signals (SIGALRM for DNS timeouts) in a process that may run threads.
  CUDNNCTL_SETOPT(check, h, CURLOPT_NOSIGNAL, 1L);
  CUDNNCTL_SETOPT(check, h, CURLOPT_TCP_KEEPALIVE, 1L);
  CUDNNCTL_SETOPT(check, h, CURLOPT_USERAGENT, "cudnnctl/" CUDNNCTL_VERSION);
  if (options.cacert) {
    // CURLOPT_CAINFO replaces libcurl's default bundle; clearing CURLOPT_CAPATH as well makes
    // the given file the whole trust store (not an addition to the system's CAs).
    CUDNNCTL_SETOPT(check, h, CURLOPT_CAINFO, options.cacert->c_str());
    CUDNNCTL_SETOPT(check, h, CURLOPT_CAPATH, static_cast<const char*>(nullptr));
  } else if (static const std::optional<std::string> system_bundle = system_ca_bundle();
             system_bundle) {
    // The portable release's static libcurl has no built-in bundle path (it runs on
    // distributions that keep the system store in different places): the first store found.
    CUDNNCTL_SETOPT(check, h, CURLOPT_CAINFO, system_bundle->c_str());
  }
  // RESUME_FROM_LARGE (not a hand-set CURLOPT_RANGE): libcurl then refuses a 200 answer with
  // CURLE_RANGE_ERROR instead of appending the whole file to our partial one.
  CUDNNCTL_SETOPT(check, h, CURLOPT_RESUME_FROM_LARGE, static_cast<curl_off_t>(resume_from));
  CUDNNCTL_SETOPT(check, h, CURLOPT_HEADERFUNCTION, callbacks.header);
  CUDNNCTL_SETOPT(check, h, CURLOPT_HEADERDATA, callbacks.userdata);
  CUDNNCTL_SETOPT(check, h, CURLOPT_WRITEFUNCTION, callbacks.write);
  CUDNNCTL_SETOPT(check, h, CURLOPT_WRITEDATA, callbacks.userdata);
  if (check.code != CURLE_OK) {
    const ErrorCode code =
        check.code == CURLE_URL_MALFORMAT ? ErrorCode::usage : ErrorCode::internal;
    return fail(code, std::string("libcurl rejected ") + check.name + " for " + url + ": " +
                          curl_lib().easy_strerror(check.code));
  }
  return {};
}

#undef CUDNNCTL_SETOPT

std::optional<std::string> first_ca_bundle(std::span<const char* const> candidates) {
  for (const char* path : candidates) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(path, ec)) {
      return std::string(path);
    }
  }
  return std::nullopt;
}

std::optional<std::string> system_ca_bundle() {
  const curl_version_info_data* info = curl_lib().version_info(CURLVERSION_NOW);
  if (info != nullptr && (info->cainfo != nullptr || info->capath != nullptr)) {
    return std::nullopt; // libcurl's own default (a distribution's libcurl) stays
  }
  return first_ca_bundle(kSystemCaBundles);
}

CURLcode CurlHandle::perform() {
  m_error[0] = '\0';
  return curl_lib().easy_perform(m_handle.get());
}

std::string CurlHandle::error_text(CURLcode code) const {
  std::string text(m_error.data());
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) {
    text.pop_back();
  }
  return text.empty() ? std::string(curl_lib().easy_strerror(code)) : text;
}

long CurlHandle::response_code() const {
  long code = 0;
  if (curl_lib().easy_getinfo(m_handle.get(), CURLINFO_RESPONSE_CODE, &code) != CURLE_OK) {
    return 0;
  }
  return code;
}

void CurlHandle::Deleter::operator()(CURL* handle) const {
  curl_lib().easy_cleanup(handle);
}

} // namespace cudnnctl::fetch
