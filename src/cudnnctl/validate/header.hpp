// SPDX-License-Identifier: Apache-2.0
// cudnn_version.h: CUDNN_MAJOR / CUDNN_MINOR / CUDNN_PATCHLEVEL (cuDNN 8 and 9 formats; the
// three macros, never CUDNN_VERSION whose formula changed in 9.0).
#pragma once

#include "core/result.hpp"

#include <filesystem>
#include <string>
#include <string_view>

namespace cudnnctl::validate {

// --- Interface ---

struct HeaderVersion {
  int major = 0;
  int minor = 0;
  int patch = 0;
  [[nodiscard]] std::string str() const {
    return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
  }
  // The number cudnnGetVersion() returns for this version (8.x: M*1000+m*100+p; 9.x:
  // M*10000+m*100+p).
  [[nodiscard]] long runtime_number() const {
    return major >= 9 ? major * 10000L + minor * 100L + patch
                      : major * 1000L + minor * 100L + patch;
  }
};

// Parses the text of a cudnn_version.h. Missing macro: ErrorCode::integrity naming it.
[[nodiscard]] Result<HeaderVersion> parse_version_header(std::string_view text);

// Reads and parses `path` (include/cudnn_version.h).
[[nodiscard]] Result<HeaderVersion> read_version_header(const std::filesystem::path& path);

} // namespace cudnnctl::validate
