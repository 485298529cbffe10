// SPDX-License-Identifier: Apache-2.0
#include "gpu/prefetch.hpp"

namespace cudnnctl::gpu {

InventoryPrefetch::InventoryPrefetch(std::chrono::seconds timeout)
    : m_future(std::async(std::launch::async, [timeout] { return inventory(timeout); })) {}

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

} // namespace cudnnctl::gpu
