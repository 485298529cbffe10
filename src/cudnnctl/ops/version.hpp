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

VersionInfo version_info();

} // namespace cudnnctl::ops
