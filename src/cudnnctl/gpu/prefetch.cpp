// SPDX-License-Identifier: Apache-2.0
#include "gpu/prefetch.hpp"

namespace cudnnctl::gpu {

InventoryPrefetch::InventoryPrefetch(std::chrono::seconds timeout) {
  auto started = smoke::WarmHelper::start();
  if (!started) {
    // The helper cannot be found or started: the answer is that error, at once.
    std::promise<Result<Inventory>> now;
    now.set_value(fail(started.error()));
    m_future = now.get_future();
    return;
  }
  m_helper.emplace(std::move(*started));
  m_future = std::async(std::launch::async, [this, timeout]() -> Result<Inventory> {
    return inventory_of(m_helper->inventory(timeout));
  });
}

InventoryPrefetch::~InventoryPrefetch() {
  if (m_future.valid()) {
    m_future.wait();
  }
}

bool InventoryPrefetch::ready() const {
  return m_future.valid() &&
         m_future.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
}

Result<Inventory> InventoryPrefetch::take() {
  if (!m_future.valid()) {
    return fail(ErrorCode::internal, "the GPU inventory was taken twice");
  }
  return m_future.get();
}

smoke::WarmHelper* InventoryPrefetch::warm_helper() {
  if (m_future.valid() || !m_helper || !m_helper->waiting()) {
    return nullptr;
  }
  return &*m_helper;
}

} // namespace cudnnctl::gpu
