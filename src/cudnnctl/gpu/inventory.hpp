// SPDX-License-Identifier: Apache-2.0
// The node's GPUs as gpu::check_support wants them, from the smoke helper's --gpus (or
// --smoke) report.
#pragma once

#include "gpu/support.hpp"
#include "smoke/runner.hpp"

#include <optional>
#include <string>
#include <vector>

namespace cudnnctl::gpu {

// --- Interface ---

// Every GPU of `report` (usable or skipped: a build that cannot run on a GPU the node has is
// refused even when the GPU is busy now).
std::vector<GpuFacts> facts_of(const smoke::SmokeResult& report);

// Runs `cudnnctl-smoke --gpus` and returns the GPUs it saw (empty when there is none) and
// the kernel driver's version NVML reported. Errors only when the helper cannot be run.
struct Inventory {
  std::vector<GpuFacts> gpus;
  std::optional<std::string> kernel_driver;
  smoke::SmokeResult report;
};
[[nodiscard]] Result<Inventory> inventory(std::chrono::seconds timeout);
// The same from a report already taken (install's GPU child, gpu::InventoryPrefetch).
Inventory inventory_of(smoke::SmokeResult report);

} // namespace cudnnctl::gpu
