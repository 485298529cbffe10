// SPDX-License-Identifier: Apache-2.0
// What `gc --keep N` deletes: a pure plan over a store snapshot (nix deleteGenerations).
#pragma once

#include "store/view.hpp"

#include <functional>
#include <string>
#include <vector>

namespace cudnnctl::store {

// --- Interface ---

// An unused entry kept because running processes map it.
struct Spared {
  std::string entry;
  std::string processes; // "1234 (python3), ..."
};

struct GcPlan {
  std::vector<int> generations;     // to delete, ascending
  std::vector<std::string> entries; // to delete, in store order
  std::vector<Spared> spared;
};

// Keeps `keep` generations per active slot: the slot's active one and those `rollback
// [--slot S]` would walk back to from it (the newest ones when nothing is active); deletes the
// others and the entries no kept generation uses, except the entries `users(entry)` names running
// processes for (non-empty text: spared).
[[nodiscard]] GcPlan plan_gc(const StoreView& view, int keep,
                             const std::function<std::string(const std::string& entry)>& users);

} // namespace cudnnctl::store
