// SPDX-License-Identifier: Apache-2.0
#include "ops/version.hpp"

#include "doctor/compat.hpp"
#include "fetch/fetch.hpp"

#include <archive.h>
#include <lzma.h>
#include <openssl/crypto.h>

#ifndef CUDNNCTL_COMMIT
#define CUDNNCTL_COMMIT "unknown"
#endif

namespace cudnnctl::ops {

std::string build_version() {
  return std::string(doctor::cudnnctl_version());
}

VersionInfo version_info() {
  VersionInfo v;
  v.version = std::string(doctor::cudnnctl_version());
  v.commit = CUDNNCTL_COMMIT;
  v.libraries.emplace_back("libcurl", fetch::libcurl_version());
  std::string la = archive_version_string(); // "libarchive 3.6.2"
  v.libraries.emplace_back("libarchive", la.substr(la.find(' ') + 1));
  // The xz decoder of every install from NVIDIA's .tar.xz (libarchive's, through liblzma).
  v.libraries.emplace_back("liblzma", lzma_version_string());
  std::string ssl = OpenSSL_version(OPENSSL_VERSION); // "OpenSSL 3.0.11 19 Sep 2023"
  auto first = ssl.find(' ');
  auto second = ssl.find(' ', first + 1);
  v.libraries.emplace_back("openssl", ssl.substr(first + 1, second - first - 1));
  return v;
}

} // namespace cudnnctl::ops
