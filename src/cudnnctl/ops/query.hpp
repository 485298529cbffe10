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
// Problems: ErrorCode::problems (exit 8) with data.problems listing each. `smoke` adds the
// GPU smoke test (a failure is a problem; no GPU is a warning), results in data.smoke.
[[nodiscard]] Status verify(Context& ctx, bool smoke);

// `smoke`: the GPU smoke test on the active generation, now. Passed, or skipped for lack of a
// (usable) GPU: success with a warning; failed: ErrorCode::problems (exit 8). Nothing active:
// ErrorCode::usage.
[[nodiscard]] Status smoke(Context& ctx);

} // namespace cudnnctl::ops
