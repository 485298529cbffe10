// SPDX-License-Identifier: Apache-2.0
// The gate before anything is written (dry runs too): does this build fit this host? (The
// compute-capability part may finish after install's download: finish_gpu_arch.)
#pragma once

#include "core/result.hpp"
#include "gates/findings.hpp"
#include "gpu/prefetch.hpp"
#include "manifest/manifest.hpp"

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

// The compute-capability check (gates/gpu_arch.hpp) asks `gpus` when given (install starts
// the inventory before it resolves the release, issue 21): its answer is judged here when it
// is in, or must be (--require-gpu, or another check refused); otherwise the check is left to
// finish_gpu_arch (`gpus` stays pending()). Without `gpus`: cudnnctl-smoke --gpus runs here.
[[nodiscard]] Status check_requirements(Env& env, const manifest::Selection& selection,
                                        const Demands& demands, Findings& out,
                                        gpu::InventoryPrefetch* gpus = nullptr);

// The compute-capability check that check_requirements left to later: waits for `gpus` and
// judges it with the same refusal (exit 7, checks "gpu-arch" and "compatibility",
// data.requirements.gpu_arch) or --force warning. Nothing pending: no-op.
[[nodiscard]] Status finish_gpu_arch(Env& env, const manifest::Selection& selection,
                                     gpu::InventoryPrefetch& gpus, Findings& out);

} // namespace cudnnctl::gates
