// SPDX-License-Identifier: Apache-2.0
// RAII over a libcurl easy handle (mamba src/download/curl.hpp). With fetch/curl_lib.hpp, the
// only headers of the project that include <curl/curl.h>.
#pragma once

#include "core/result.hpp"
#include "fetch/fetch.hpp"

#include <array>
#include <cstdint>
#include <curl/curl.h>
#include <memory>
#include <optional>
#include <span>
#include <string>

namespace cudnnctl::fetch {

// --- Interface ---

// The libcurl callbacks of one transfer: `header` gets every header line (of redirects
// too), `write` the body; both get `userdata`.
struct CurlCallbacks {
  curl_write_callback header = nullptr;
  curl_write_callback write = nullptr;
  void* userdata = nullptr;
};

// Owns a CURL* and the CURLOPT_ERRORBUFFER libcurl writes into. libcurl keeps a pointer to
// that buffer, so the handle is neither copyable nor movable (a move would leave libcurl
// writing into the moved-from object).
class CurlHandle {
public:
  // Throws std::runtime_error when curl_easy_init returns null (out of memory).
  CurlHandle();
  CurlHandle(const CurlHandle&) = delete;
  CurlHandle& operator=(const CurlHandle&) = delete;
  CurlHandle(CurlHandle&&) = delete;
  CurlHandle& operator=(CurlHandle&&) = delete;
  ~CurlHandle() = default;

  // Sets every option of one GET of `url` starting at byte `resume_from` (see the .cpp for
  // the list and why). Errors: ErrorCode::internal when libcurl rejects an option (a libcurl
  // built without a feature we need), ErrorCode::usage for a URL it cannot take.
  [[nodiscard]] Status prepare(const std::string& url, const Options& options, uint64_t resume_from,
                               const CurlCallbacks& callbacks);
  // Runs the transfer (blocking) and returns libcurl's result.
  CURLcode perform();
  // The error buffer's text of the last perform, else curl_easy_strerror(code).
  [[nodiscard]] std::string error_text(CURLcode code) const;
  // The last response's status code (0 for file:// or when nothing was received).
  [[nodiscard]] long response_code() const;

private:
  struct Deleter {
    void operator()(CURL* handle) const;
  };
  std::unique_ptr<CURL, Deleter> m_handle;
  std::array<char, CURL_ERROR_SIZE> m_error{};
};

// The system CA stores searched, in this order, when libcurl has no default bundle of its own
// (the portable release links a libcurl built without one; README "Install", docs/ARCHITECTURE.md
// "Portable release"). --cacert replaces the search.
inline constexpr std::array<const char*, 6> kSystemCaBundles = {
    "/etc/ssl/certs/ca-certificates.crt",                // Debian, Ubuntu, Arch, Gentoo
    "/etc/pki/tls/certs/ca-bundle.crt",                  // RHEL, Rocky, Alma, Fedora, Amazon Linux
    "/etc/ssl/ca-bundle.pem",                            // SUSE, SLES
    "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem", // RHEL's extracted store
    "/etc/ssl/cert.pem",                                 // Alpine
    "/etc/pki/tls/cacert.pem",                           // OpenELEC and old RHEL
};
// The first of `candidates` that is a regular file (symlinks followed), else nullopt.
[[nodiscard]] std::optional<std::string> first_ca_bundle(std::span<const char* const> candidates);
// nullopt when the linked libcurl has a default bundle or path of its own; else the first of
// kSystemCaBundles that exists (nullopt when none does: libcurl then fails the TLS handshake
// with CURLE_PEER_FAILED_VERIFICATION, which names --cacert).
[[nodiscard]] std::optional<std::string> system_ca_bundle();

} // namespace cudnnctl::fetch
