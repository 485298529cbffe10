// SPDX-License-Identifier: Apache-2.0
// `cudnnctl-smoke --gpus` on its own thread (issue 21): install starts the GPU inventory before
// it resolves the release, so that the child's CUDA driver initialisation (about 0.3 s on a
// real GPU) overlaps the manifest fetch and the download instead of coming before them.
#pragma once

#include "gpu/inventory.hpp"

#include <chrono>
#include <future>

namespace cudnnctl::gpu {

// --- Interface ---

// Started by the constructor (std::async, std::launch::async); the destructor waits for the
// child (its own timeout applies), so no thread outlives the object, on any path.
class InventoryPrefetch {
public:
  explicit InventoryPrefetch(std::chrono::seconds timeout);
  InventoryPrefetch(const InventoryPrefetch&) = delete;
  InventoryPrefetch& operator=(const InventoryPrefetch&) = delete;
  ~InventoryPrefetch();

  // The answer is in (take() will not wait). False once taken.
  [[nodiscard]] bool ready() const;
  // Not taken yet.
  [[nodiscard]] bool pending() const { return m_future.valid(); }
  // The inventory, waiting for it when it is not in yet; once (pending() is false after).
  [[nodiscard]] Result<Inventory> take();

private:
  std::future<Result<Inventory>> m_future;
};

} // namespace cudnnctl::gpu
