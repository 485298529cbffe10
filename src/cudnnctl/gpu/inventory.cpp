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

Result<Inventory> inventory(std::chrono::seconds timeout) {
  TRY_ASSIGN(smoke::SmokeResult r, smoke::run_gpu_presence(timeout));
  Inventory inv;
  inv.gpus = facts_of(r);
  inv.kernel_driver = r.kernel_driver;
  inv.report = std::move(r);
  return inv;
}

} // namespace cudnnctl::gpu
