// SPDX-License-Identifier: Apache-2.0
// Gates around the switch: requirements checked before anything is written (exit 7 unless
// --force), and the checks run on the new generation after the switch (a failure there
// reverts the switch: exit 5).
#pragma once

#include "manifest/manifest.hpp"
#include "ops/context.hpp"
#include "ops/install.hpp"

#include <string>

namespace cudnnctl::ops {

// --- Interface ---

// CUDA variant vs the installed toolkit, driver minimum, --require-gpu.
[[nodiscard]] Status check_requirements(Context& ctx, const manifest::Selection& selection,
                                        const InstallOptions& options);

// After the switch to store entry `entry`: the dynamic loader resolves libcudnn.so.<major>
// into the entry; the GPU smoke test (unless --no-smoke).
[[nodiscard]] Status post_switch_checks(Context& ctx, const std::string& entry,
                                        const InstallOptions& options);

} // namespace cudnnctl::ops
