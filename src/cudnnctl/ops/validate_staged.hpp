// SPDX-License-Identifier: Apache-2.0
// Pre-switch validation of an extracted tree (failure: ErrorCode::integrity, exit 4;
// nothing has been activated).
#pragma once

#include "manifest/manifest.hpp"
#include "ops/context.hpp"

#include <filesystem>

namespace cudnnctl::ops {

// --- Interface ---

// Checks the staged tree against the selected release: cudnn_version.h agrees with the
// manifest version; the runtime library is present.
[[nodiscard]] Status validate_staged(Context& ctx, const std::filesystem::path& tree,
                                     const manifest::Selection& selection);

} // namespace cudnnctl::ops
