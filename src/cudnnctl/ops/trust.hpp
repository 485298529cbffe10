// SPDX-License-Identifier: Apache-2.0
// Which paths under the root a root tool may act on (util/trust.hpp does the walking).
#pragma once

#include "ops/context.hpp"
#include "util/result.hpp"

#include <filesystem>

namespace cudnnctl::ops {

// --- Interface ---

// Refuses what configures cudnnctl under `root` when users other than root (and us) could
// write it: /etc/cudnnctl, config.toml and
// every file in pins.d/, keys.d/ and recalls.d/ (each owned by root or us, writable by nobody
// else, a regular file). Missing ones are fine. Error: ErrorCode::environment.
[[nodiscard]] Status check_config_trust(const std::filesystem::path& root);

} // namespace cudnnctl::ops
