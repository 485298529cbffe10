// SPDX-License-Identifier: Apache-2.0
// `install VERSION`: resolve, download (or --archive), verify, extract into staging,
// validate, publish the store entry, create a generation, switch, check, commit.
#pragma once

#include "ops/context.hpp"

#include <optional>
#include <string>
#include <vector>

namespace cudnnctl::ops {

// --- Interface ---

struct InstallOptions {
  std::string version;
  std::optional<std::string> archive;  // --archive FILE (host path)
  std::vector<std::string> components; // empty = default (runtime, headers)
  bool no_smoke = false;
  bool require_gpu = false;
};

// Parses "--components runtime,headers,static" into a sorted set; unknown names:
// ErrorCode::usage listing the valid ones.
[[nodiscard]] Result<std::vector<std::string>> parse_components(const std::string& list);

[[nodiscard]] Status install(Context& ctx, const InstallOptions& options);

} // namespace cudnnctl::ops
