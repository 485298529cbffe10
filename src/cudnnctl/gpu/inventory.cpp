// SPDX-License-Identifier: Apache-2.0
#include "gpu/inventory.hpp"

namespace cudnnctl::gpu {

std::vector<GpuFacts> facts_of(const smoke::SmokeResult& report) {
  std::vector<GpuFacts> out;
  for (const auto& g : report.gpus) {
    out.push_back({g.gpu, g.name, g.compute_capability});
  }
  return out;
}

Inventory inventory_of(smoke::SmokeResult report) {
  Inventory inv;
  inv.gpus = facts_of(report);
  inv.kernel_driver = report.kernel_driver;
  inv.report = std::move(report);
  return inv;
}

Result<Inventory> inventory(std::chrono::seconds timeout) {
  TRY_ASSIGN(smoke::SmokeResult r, smoke::run_gpu_presence(timeout));
  return inventory_of(std::move(r));
}

} // namespace cudnnctl::gpu
