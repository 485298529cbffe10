// SPDX-License-Identifier: Apache-2.0
// What `cudnnctl --version` says: this build's version and commit, and the versions of the
// libraries it runs with (read at run time, so a relocated build names what it really loaded).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace cudnnctl::ops {

// --- Interface ---

struct VersionInfo {
  std::string version; // the CMake project version
  std::string commit;  // git commit the build was configured from, "unknown" outside git
  std::vector<std::pair<std::string, std::string>> libraries; // name -> version, in order
};

// Loads libcurl in the developer build (fetch/curl_lib.hpp): for --version, not at every start.
VersionInfo version_info();

// This build's version alone ("0.1.0"), asking no library.
std::string build_version();

} // namespace cudnnctl::ops
