// SPDX-License-Identifier: Apache-2.0
// The gate before anything is written (dry runs too): does this build fit this host?
#pragma once

#include "gates/findings.hpp"
#include "manifest/manifest.hpp"
#include "util/result.hpp"

namespace cudnnctl::gates {

// --- Interface ---

// Refusals are ErrorCode::requirement (exit 7) with a message saying what would work:
//  - the archive's CUDA variant against the CUDA toolkit under the root (none found: a
//    warning), and the NVIDIA driver (<proc>/driver/nvidia/version; CUDNNCTL_TEST_PROC
//    replaces /proc; absent: no driver, no refusal) against the minimum for that CUDA major:
//    --force turns these into warnings;
//  - --require-gpu with no usable GPU (cudnnctl-smoke --gpus): not overridden by --force.
// --require-gpu with --no-smoke, or without the runtime component: ErrorCode::usage.
// Every gate's verdict goes into `out`.
// Only the --require-gpu part of check_requirements (use VERSION: the build already fits):
// the usage errors, then a usable GPU must be visible now (ErrorCode::requirement, exit 7),
// so that the refusal comes before the switch, never as a rollback after it.
[[nodiscard]] Status check_gpu_demand(Env& env, const Demands& demands, Findings& out);

[[nodiscard]] Status check_requirements(Env& env, const manifest::Selection& selection,
                                        const Demands& demands, Findings& out);

} // namespace cudnnctl::gates
