// SPDX-License-Identifier: Apache-2.0
// Slots (DESIGN.md "Contract added in round two"): a slot is one (cuDNN major, CUDA major)
// with an active version, named "<cuDNN major>-cuda<CUDA major>" ("9-cuda13"). The primary
// slot is the one `current` names (today's layout, unchanged); every other active slot has
// its own pointer <prefix>/slots/<slot> -> ../generations/<N>. Generations are numbered in
// one sequence for all slots; a generation belongs to the slot of its store entry.
#pragma once

#include "core/result.hpp"
#include "store/entry.hpp"
#include "store/layout.hpp"

#include <optional>
#include <string>
#include <vector>

namespace cudnnctl::store {

// --- Interface ---

// "<major of version>-cuda<cuda>"; the cuDNN major is the version's first component.
[[nodiscard]] std::string slot_id(const std::string& version, int cuda_major);
[[nodiscard]] std::string slot_id(const EntryInfo& entry);
// The cuDNN major of a slot id (0 when malformed).
[[nodiscard]] int slot_major(const std::string& slot);
// True for "<digits>-cuda<digits>".
[[nodiscard]] bool valid_slot_id(const std::string& slot);

// <prefix>/slots and <prefix>/slots/<slot> (host paths).
[[nodiscard]] fs::path slots_dir(const Layout& layout);
[[nodiscard]] fs::path slot_link(const Layout& layout, const std::string& slot);

// A non-primary slot's pointer.
struct SlotLink {
  std::string slot;
  int generation = 0;
};

// The non-primary slot pointers, sorted by slot. Links that are not ../generations/<N> or
// whose name is not a slot id are skipped with a warning.
[[nodiscard]] Result<std::vector<SlotLink>> list_slot_links(const Layout& layout,
                                                            std::vector<std::string>& warnings);

// The generation slot `slot` points at: "" means the primary slot (`current`).
[[nodiscard]] Result<std::optional<int>> slot_generation(const Layout& layout,
                                                         const std::string& slot);

// Points slot `slot` ("" = `current`) at generations/<n> (temporary link, rename, fsync),
// or removes its pointer when `n` is nullopt.
[[nodiscard]] Status point_slot(const Layout& layout, const std::string& slot,
                                std::optional<int> n);

} // namespace cudnnctl::store
