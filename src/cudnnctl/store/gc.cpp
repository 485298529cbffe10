// SPDX-License-Identifier: Apache-2.0
#include "store/gc.hpp"

#include <set>

namespace cudnnctl::store {

GcPlan plan_gc(const StoreView& view, int keep,
               const std::function<std::string(const std::string& entry)>& users) {
  // Keep what `rollback` would walk back to: the active generation and its ancestors.
  // Without an active generation, keep the newest ones.
  // Per slot (slots.hpp): each active slot keeps `keep` of the generations its own
  // `rollback [--slot S]` walks (the primary slot: what plain `rollback` walks).
  std::set<int> kept;
  if (view.current || !view.slots.empty()) {
    for (const auto& a : view.active_slots()) {
      std::vector<Generation> walk;
      for (const auto& g : view.generations) {
        if (a.primary || view.slot_of(g.number) == a.slot) {
          walk.push_back(g);
        }
      }
      std::set<int> mine;
      std::optional<int> g = a.generation;
      while (g && static_cast<int>(mine.size()) < keep && !mine.count(*g)) {
        mine.insert(*g);
        g = rollback_target(walk, *g);
      }
      kept.insert(mine.begin(), mine.end());
    }
  } else {
    for (auto it = view.generations.rbegin();
         it != view.generations.rend() && static_cast<int>(kept.size()) < keep; ++it) {
      kept.insert(it->number);
    }
  }
  GcPlan plan;
  std::set<std::string> used;
  for (const auto& g : view.generations) {
    if (kept.count(g.number)) {
      used.insert(g.entry);
    } else {
      plan.generations.push_back(g.number);
    }
  }
  for (const auto& e : view.entries) {
    if (used.count(e.name)) {
      continue;
    }
    if (std::string who = users(e.name); !who.empty()) {
      plan.spared.push_back({e.name, who});
      continue;
    }
    plan.entries.push_back(e.name);
  }
  return plan;
}

} // namespace cudnnctl::store
