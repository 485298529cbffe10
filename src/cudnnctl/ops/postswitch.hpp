// SPDX-License-Identifier: Apache-2.0
// Gates around the switch: requirements checked before anything is written (exit 7 unless
// --force), and the checks run on the new generation after the switch (a failure there
// reverts the switch: exit 5). Every gate's result goes into data.checks.
#pragma once

#include "manifest/manifest.hpp"
#include "ops/context.hpp"
#include "ops/install.hpp"
#include "smoke/runner.hpp"
#include "store/entry.hpp"

#include <optional>
#include <string>

namespace cudnnctl::ops {

// --- Interface ---

// Appends {"name", "status", "message"} to data.checks; status is "passed", "failed",
// "skipped" or "warning".
void record_check(Context& ctx, const std::string& name, const std::string& status,
                  const std::string& message);

// Before anything is written (dry runs too). Refusals are ErrorCode::requirement (exit 7)
// with a message saying what would work:
//  - the archive's CUDA variant against the CUDA toolkit under the root (none found: a
//    warning), and the NVIDIA driver (<proc>/driver/nvidia/version; CUDNNCTL_TEST_PROC
//    replaces /proc; absent: no driver, no refusal) against the minimum for that CUDA major:
//    --force turns these into warnings;
//  - --require-gpu with no usable GPU (cudnnctl-smoke --gpus): not overridden by --force.
// --require-gpu with --no-smoke: ErrorCode::usage.
[[nodiscard]] Status check_requirements(Context& ctx, const manifest::Selection& selection,
                                        const InstallOptions& options);

// After the switch to store entry `entry`:
//  - "loader": with root "/", a real child without LD_LIBRARY_PATH (cudnnctl-smoke --which)
//    loads libcudnn.so.<major> through the dynamic loader and it must come from the entry's
//    lib/; under another root, `ldconfig -r <root> -p` must map it there;
//  - "smoke" (unless --no-smoke): the GPU smoke test on the entry; no GPU is "skipped"
//    (a warning), or a failure under --require-gpu.
// data.smoke holds the smoke result with the per-GPU lines. Failure: ErrorCode::rolled_back
// (the caller reverts the switch).
[[nodiscard]] Status post_switch_checks(Context& ctx, const std::string& entry,
                                        const InstallOptions& options);

// Runs the GPU smoke test on an entry's lib/libcudnn.so.<major> (host path), records it as
// check "smoke" and in data.smoke, and returns the result (errors: the helper cannot run).
[[nodiscard]] Result<smoke::SmokeResult> run_smoke_on_entry(Context& ctx,
                                                            const store::EntryInfo& entry);

} // namespace cudnnctl::ops
