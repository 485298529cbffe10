// SPDX-License-Identifier: Apache-2.0
// install's GPU child on its own thread (issue 21): install starts `cudnnctl-smoke --warm`
// before it resolves the release, so that the CUDA driver's initialisation and GPU 0's
// context (about 0.3 s on a real GPU) overlap the manifest fetch and the download instead of
// coming before them; the same child, once the inventory is taken, runs the runtime probe
// (warm_helper()), so the driver is initialised once, not in two children side by side.
#pragma once

#include "gpu/inventory.hpp"

#include <chrono>
#include <future>
#include <optional>

namespace cudnnctl::gpu {

// --- Interface ---

// Started by the constructor (std::async, std::launch::async); the destructor waits for the
// inventory (its own timeout applies), so no thread outlives the object, on any path, and
// then ends the child.
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
  // The child that reported the inventory, waiting for the runtime probe's request: once the
  // inventory is taken, and only when it came whole (a child that timed out, crashed or
  // could not start is not reused). Null otherwise: the probe then runs in a child of its own.
  [[nodiscard]] smoke::WarmHelper* warm_helper();
  // The same child for early loads while the pass runs (WarmHelper::send_early is safe beside
  // the inventory's reading), also before the inventory is in. Null when it could not start.
  [[nodiscard]] smoke::WarmHelper* early_helper() { return m_helper ? &*m_helper : nullptr; }

private:
  std::optional<smoke::WarmHelper> m_helper; // declared first: destroyed after the thread ended
  std::future<Result<Inventory>> m_future;
};

} // namespace cudnnctl::gpu
