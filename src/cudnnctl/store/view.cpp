// SPDX-License-Identifier: Apache-2.0
#include "store/view.hpp"

#include "manifest/version.hpp"
#include "store/history.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace cudnnctl::store {

const Generation* StoreView::generation(int n) const {
  for (const auto& g : generations) {
    if (g.number == n) {
      return &g;
    }
  }
  return nullptr;
}

const EntryInfo* StoreView::entry(const std::string& name) const {
  for (const auto& e : entries) {
    if (e.name == name) {
      return &e;
    }
  }
  return nullptr;
}

const EntryInfo* StoreView::active_entry() const {
  return slot_entry("");
}

const EntryInfo* StoreView::slot_entry(const std::string& slot) const {
  const auto n = slot_current(slot);
  const auto* g = n ? generation(*n) : nullptr;
  return g ? entry(g->entry) : nullptr;
}

std::optional<std::string> StoreView::entry_of(std::optional<int> n) const {
  const auto* g = n ? generation(*n) : nullptr;
  return g ? std::optional<std::string>(g->entry) : std::nullopt;
}

std::string StoreView::slot_of(std::optional<int> n) const {
  const auto* g = n ? generation(*n) : nullptr;
  const auto* e = g ? entry(g->entry) : nullptr;
  return e ? slot_id(*e) : (g ? g->slot : std::string());
}

std::optional<int> StoreView::slot_current(const std::string& slot) const {
  if (slot.empty() || slot == primary_slot()) {
    return current;
  }
  for (const auto& s : slots) {
    if (s.slot == slot) {
      return s.generation;
    }
  }
  return std::nullopt;
}

std::vector<StoreView::Active> StoreView::active_slots() const {
  std::vector<Active> out;
  std::string primary = primary_slot();
  if (current) {
    out.push_back({primary, *current, true});
  }
  for (const auto& s : slots) {
    if (s.slot != primary) {
      out.push_back({s.slot, s.generation, false});
    }
  }
  return out;
}

bool StoreView::is_active(int n) const {
  for (const auto& a : active_slots()) {
    if (a.generation == n) {
      return true;
    }
  }
  return false;
}

Result<StoreView> read_store(const Layout& layout, std::vector<std::string>& warnings) {
  // Lock-free readers (issue 14, B11): `current` is read first and resolved through what is
  // listed after it; a switch, or a gc deleting what the old `current` named, between the two
  // reads is seen as a generation or entry missing, and one more read shows the new state.
  StoreView view;
  for (int attempt = 0; attempt < 2; ++attempt) {
    std::vector<std::string> seen;
    view = StoreView{};
    TRY_ASSIGN(view.current, current_generation(layout));
    TRY_ASSIGN(view.generations, list_generations(layout, seen));
    TRY_ASSIGN(view.entries, list_entries(layout, seen));
    TRY_ASSIGN(view.slots, list_slot_links(layout, seen));
    const Generation* g = view.current ? view.generation(*view.current) : nullptr;
    bool whole = !view.current || (g && view.entry(g->entry));
    if (!whole && attempt == 0) {
      continue;
    }
    if (view.current && !g) {
      seen.push_back("current names generation " + std::to_string(*view.current) +
                     ", which does not exist; run `cudnnctl recover` (it switches to an intact "
                     "generation)");
    } else if (view.current && !whole) {
      seen.push_back("the active generation " + std::to_string(*view.current) +
                     " names the store entry " + g->entry +
                     ", which is missing or damaged: nothing usable is active; run `cudnnctl "
                     "recover` (it switches to an intact generation)");
    }
    warnings.insert(warnings.end(), seen.begin(), seen.end());
    break;
  }
  return view;
}

std::optional<GenInfo> gen_info(const Layout& layout, const StoreView& view, std::optional<int> n) {
  if (!n) {
    return std::nullopt;
  }
  const auto* g = view.generation(*n);
  if (!g) {
    return std::nullopt;
  }
  const auto* e = view.entry(g->entry);
  if (!e) {
    return std::nullopt;
  }
  return GenInfo{
      e->version, e->cuda_major, e->platform, g->number, layout.entry_dir(e->name).string(),
      e->name,    e->origin};
}

ActivePair active_pair(const Layout& layout, const StoreView& view) {
  ActivePair p;
  p.active = gen_info(layout, view, view.current);
  if (view.current) {
    p.previous = gen_info(layout, view, rollback_target(view.generations, *view.current));
  }
  return p;
}

std::vector<const EntryInfo*> match_entries(const StoreView& view,
                                            const manifest::VersionArg& version_arg,
                                            std::optional<int> cuda,
                                            const std::optional<std::string>& platform) {
  std::vector<const EntryInfo*> out;
  // The name `list` prints names one entry (two adopted builds of one version differ only
  // in it).
  for (const auto& e : view.entries) {
    if (e.name == version_arg.text) {
      return {&e};
    }
  }
  const auto& wanted = version_arg.version;
  if (!wanted) {
    return out;
  }
  for (const auto& e : view.entries) {
    const auto& v = e.parsed_version;
    bool version_ok = (v && wanted->is_prefix_of(*v)) || e.label == version_arg.text;
    bool cuda_ok = !cuda || *cuda == e.cuda_major;
    bool platform_ok = !platform || *platform == e.platform;
    if (version_ok && cuda_ok && platform_ok) {
      out.push_back(&e);
    }
  }
  return out;
}

std::string describe(const EntryInfo& e) {
  std::string s = e.version + " (CUDA " + std::to_string(e.cuda_major) + ", " + e.platform;
  if (e.origin != "installed") {
    s += ", " + e.origin;
  }
  return s + ")";
}

Result<int> next_generation_number(const Layout& layout,
                                   const std::vector<Generation>& generations) {
  int best = max_generation(generations, layout);
  std::vector<std::string> warnings;
  TRY_ASSIGN(auto history, read_history(layout, warnings));
  for (const auto& rec : history) {
    for (int n : named_generations(rec)) {
      best = std::max(best, n);
    }
  }
  return best + 1;
}

} // namespace cudnnctl::store
