// SPDX-License-Identifier: Apache-2.0
// Read-only commands: `status`, `list`, `history`, `verify`. They create nothing (no lock,
// no state directory) and work without root.
#pragma once

#include "ops/context.hpp"

namespace cudnnctl::ops {

// --- Interface ---

[[nodiscard]] Status status(Context& ctx);
[[nodiscard]] Status list(Context& ctx);
[[nodiscard]] Status history(Context& ctx);

// Re-checks the active generation: every recorded file and link against the sha256 and
// targets recorded at install, nothing extra in include/ and lib/, the header version.
// Problems: ErrorCode::problems (exit 8) with data.problems listing each.
[[nodiscard]] Status verify(Context& ctx, bool smoke);

} // namespace cudnnctl::ops
