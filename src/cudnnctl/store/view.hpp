// SPDX-License-Identifier: Apache-2.0
// Read-only snapshots of the store: the generations, the entries, which one is active. Readers
// take no lock: every publication is one rename, so a snapshot shows the old or the new state.
#pragma once

#include "core/result.hpp"
#include "store/entry.hpp"
#include "store/generations.hpp"
#include "store/layout.hpp"
#include "store/slots.hpp"

#include <optional>
#include <string>
#include <vector>

namespace cudnnctl::store {

// --- Interface ---

// A snapshot of the store: generations, entries, the active generation.
struct StoreView {
  std::vector<Generation> generations;
  std::vector<EntryInfo> entries;
  std::optional<int> current;
  std::vector<SlotLink> slots; // the non-primary slots' pointers (slots.hpp)

  [[nodiscard]] const Generation* generation(int n) const;
  [[nodiscard]] const EntryInfo* entry(const std::string& name) const;
  // The entry the current generation points at, or nullptr.
  [[nodiscard]] const EntryInfo* active_entry() const;
  // The entry slot `slot` points at ("" or the primary's id: the current generation's), or
  // nullptr.
  [[nodiscard]] const EntryInfo* slot_entry(const std::string& slot) const;
  // The store entry generation `n` points at, or nullopt.
  [[nodiscard]] std::optional<std::string> entry_of(std::optional<int> n) const;
  // The slot generation `n` belongs to (its entry's slot id), "" when unknown.
  [[nodiscard]] std::string slot_of(std::optional<int> n) const;
  // The primary slot's id ("" when nothing is active).
  [[nodiscard]] std::string primary_slot() const { return slot_of(current); }
  // The generation slot `slot` points at ("" or the primary slot's id: `current`).
  [[nodiscard]] std::optional<int> slot_current(const std::string& slot) const;
  // Every active slot, the primary first: {slot, generation, primary}.
  struct Active {
    std::string slot;
    int generation = 0;
    bool primary = false;
  };
  [[nodiscard]] std::vector<Active> active_slots() const;
  // True when generation `n` is active in some slot.
  [[nodiscard]] bool is_active(int n) const;
};

// Reads the snapshot; what is damaged (unreadable metadata, a `current` naming a missing
// generation) is appended to `warnings`.
[[nodiscard]] Result<StoreView> read_store(const Layout& layout,
                                           std::vector<std::string>& warnings);

// A generation as the contract's "active"/"previous" objects describe it.
struct GenInfo {
  std::string version;
  int cuda = 0;
  std::string platform;
  int generation = 0;
  std::string path; // host path of the store entry
  std::string entry;
  std::string origin;
};

// GenInfo for generation n (nullopt when it or its entry is missing).
[[nodiscard]] std::optional<GenInfo> gen_info(const Layout& layout, const StoreView& view,
                                              std::optional<int> n);

// The active generation and the one `rollback` would go to.
struct ActivePair {
  std::optional<GenInfo> active;
  std::optional<GenInfo> previous;
};
[[nodiscard]] ActivePair active_pair(const Layout& layout, const StoreView& view);

// Entries matching a VERSION argument: an entry's name, or a label or version prefix ("9.1",
// "9.1.0", "9.1.0.70"), filtered by `cuda` and `platform` when given.
[[nodiscard]] std::vector<const EntryInfo*>
match_entries(const StoreView& view, const manifest::VersionArg& version_arg,
              std::optional<int> cuda, const std::optional<std::string>& platform);

// One human line describing an entry: "9.1.0.70 (CUDA 12, linux-x86_64)".
[[nodiscard]] std::string describe(const EntryInfo& e);

// Next free generation number: above every link, metadata file and history record (a number
// is never reused while anything mentions it).
[[nodiscard]] Result<int> next_generation_number(const Layout& layout,
                                                 const std::vector<Generation>& generations);

} // namespace cudnnctl::store
