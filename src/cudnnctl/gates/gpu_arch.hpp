// SPDX-License-Identifier: Apache-2.0
// The compute-capability gate (issue 17): before anything is switched (and, unless install's
// inventory is still coming when the download starts, issue 21, before the download), every
// GPU the node shows (cudnnctl-smoke --gpus) is judged against the build's device code
// (manifests/gpu_support.json through gpu::check_support). Kept apart from the toolkit and
// driver checks of requirements.cpp, which calls it.
#pragma once

#include "core/result.hpp"
#include "gates/findings.hpp"
#include "gpu/inventory.hpp"
#include "manifest/manifest.hpp"

#include <string>

namespace cudnnctl::gates {

// --- Interface ---

// Records check "gpu-arch" and data.requirements.gpu_arch. Returns the refusal text (the
// unsupported GPUs, each with its compute capability, the release and CUDA variant and what
// to use instead), or "" when every visible GPU can run the build, no GPU is visible (said
// at -v), no table row covers the build, or the GPU inventory could not be taken (a warning).
// The caller turns a refusal into exit 7 unless --force.
[[nodiscard]] std::string check_gpu_arch(Env& env, const manifest::Selection& selection,
                                         Findings& out);

// check_gpu_arch on an inventory already taken (install's gpu::InventoryPrefetch, issue 21).
[[nodiscard]] std::string judge_gpu_arch(Env& env, const manifest::Selection& selection,
                                         const Result<gpu::Inventory>& inventory, Findings& out);

// `use` of a stored entry: check_gpu_arch, its refusal as ErrorCode::requirement (exit 7),
// or with --force a warning (check "compatibility" as install records it).
[[nodiscard]] Status gate_gpu_arch(Env& env, const manifest::Selection& selection, Findings& out);

} // namespace cudnnctl::gates
