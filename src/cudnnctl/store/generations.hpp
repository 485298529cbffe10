// SPDX-License-Identifier: Apache-2.0
// Generations: <prefix>/generations/<N> -> ../store/<entry> (relative symlink), each with
// <N>.json recording its parent (the generation active when it was created), and
// <prefix>/current -> generations/<N>, the single commit point of every switch.
#pragma once

#include "core/result.hpp"
#include "store/layout.hpp"

#include <optional>
#include <string>
#include <vector>

namespace cudnnctl::store {

// --- Interface ---

struct Generation {
  int number = 0;
  std::string entry;         // store entry name it points at
  std::optional<int> parent; // generation active when this one was created
  std::string created;       // UTC timestamp
  std::string command;       // what created it, e.g. "install 9.1.0"
  std::string slot;          // its slot ("9-cuda13", slots.hpp); empty in generations of earlier
                             // versions, whose slot is their entry's
};

// A generation's number from its name in generations/ ("12"; not "0", "012" or "12.json"):
// the one rule for what a generation is called.
[[nodiscard]] std::optional<int> parse_gen_number(std::string_view name);

// All generations with a link, ascending. A link whose metadata is missing gets no parent.
// Links that do not name ../store/<entry> are skipped with a warning.
[[nodiscard]] Result<std::vector<Generation>> list_generations(const Layout& layout,
                                                               std::vector<std::string>& warnings);

// The generation `current` names, or nullopt when there is no `current` link.
// A `current` that names something else than generations/<N>: ErrorCode::environment.
[[nodiscard]] Result<std::optional<int>> current_generation(const Layout& layout);

// The generation `rollback` goes to from `from`: its recorded parent when that generation
// still exists, else the highest existing generation below `from`; nullopt when none.
std::optional<int> rollback_target(const std::vector<Generation>& gens, int from);

// Creates generation `n` for `entry`: metadata first, then the link (the link is what makes
// the generation exist; metadata without a link is swept as a leftover).
[[nodiscard]] Status create_generation(const Layout& layout, const Generation& gen);

// Removes the link, then the metadata, of generation `n`. Missing is fine.
[[nodiscard]] Status remove_generation(const Layout& layout, int n);

// Flips `current` to generations/<n> (temporary link + rename + directory fsync).
[[nodiscard]] Status set_current(const Layout& layout, int n);

// Highest generation number in use (links or metadata), 0 when none.
[[nodiscard]] int max_generation(const std::vector<Generation>& gens, const Layout& layout);

} // namespace cudnnctl::store
