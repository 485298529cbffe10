// SPDX-License-Identifier: Apache-2.0
#include "ops/version.hpp"

#include "doctor/compat.hpp"

#include <archive.h>
#include <curl/curl.h>
#include <openssl/crypto.h>

#ifndef CUDNNCTL_COMMIT
#define CUDNNCTL_COMMIT "unknown"
#endif

namespace cudnnctl::ops {

VersionInfo version_info() {
  VersionInfo v;
  v.version = std::string(doctor::cudnnctl_version());
  v.commit = CUDNNCTL_COMMIT;
  const curl_version_info_data* curl = curl_version_info(CURLVERSION_NOW);
  v.libraries.emplace_back("libcurl", curl && curl->version ? curl->version : "unknown");
  std::string la = archive_version_string(); // "libarchive 3.6.2"
  v.libraries.emplace_back("libarchive", la.substr(la.find(' ') + 1));
  std::string ssl = OpenSSL_version(OPENSSL_VERSION); // "OpenSSL 3.0.11 19 Sep 2023"
  auto first = ssl.find(' ');
  auto second = ssl.find(' ', first + 1);
  v.libraries.emplace_back("openssl", ssl.substr(first + 1, second - first - 1));
  return v;
}

} // namespace cudnnctl::ops
