// SPDX-License-Identifier: Apache-2.0
// /etc/cudnnctl/config.toml under the root: the site's settings. Command-line flags override
// them (ops::Context says which wins).
#pragma once

#include "util/result.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudnnctl::store {

// --- Interface ---

// Every key is optional.
struct Config {
  std::vector<std::string> mirrors;
  std::optional<std::string> prefix;
  std::string cuda_home = "/usr/local/cuda";
  std::optional<int> cuda;
  std::optional<std::string> platform;
  std::optional<std::string> cacert;
  bool require_pin = false;
  double lock_timeout = 300;
  int keep_generations = 3;
  int smoke_timeout = 120;
  bool manage_cuda_home = true;
};

// Parses config text; unknown keys and wrong types: ErrorCode::usage naming file:line.
[[nodiscard]] Result<Config> parse_config(std::string_view text, std::string_view source);

// Reads <root>/etc/cudnnctl/config.toml (missing: defaults).
[[nodiscard]] Result<Config> load_config(const std::string& root);

} // namespace cudnnctl::store
