// SPDX-License-Identifier: Apache-2.0
// `verify [--smoke] [--slot S | --all-slots]`: re-checks an active generation against what was
// recorded at install. Read-only (no lock, no state directory) and works without root.
#pragma once

#include "gates/findings.hpp"
#include "ops/context.hpp"
#include "store/entry.hpp"

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace cudnnctl::ops {

// --- Interface ---

struct VerifyOptions {
  bool smoke = false;
  std::optional<std::string> slot; // --slot S: that slot's active entry (default: the primary)
  bool all_slots = false;          // --all-slots: every active slot, the primary first
};

struct VerifyResult : Outcome {
  std::string slot; // the slot checked ("" = the primary slot, `current`)
  int generation = 0;
  std::string entry;
  size_t checked_files = 0;
  std::vector<std::string> problems;
  gates::Findings findings; // the smoke test
  bool completed = false;   // every check ran (problems says what they found)
  // --all-slots: one result per active slot, the primary first (slot: its id there).
  struct Slot {
    std::string slot;
    bool primary = false;
    int generation = 0;
    std::string entry;
    size_t checked_files = 0;
    std::vector<std::string> problems; // or why it could not be checked
  };
  std::vector<Slot> slots;
};

// Re-checks the slot's active generation (the primary unless `slot`): every recorded file and
// link against the sha256 and targets recorded at install, nothing extra in the entry, the
// header version, no signed recall naming it. Problems: ErrorCode::problems (exit 8). `smoke`
// adds the GPU smoke test (a failure is a problem; no GPU is a warning). An unknown slot:
// ErrorCode::usage naming the active ones. `all_slots`: each active slot in turn; exit 8 when
// any has a problem.
[[nodiscard]] Status verify(Context& ctx, const VerifyOptions& options, VerifyResult& out);

// The store entry at `dir` against what `e` recorded at install: every file's sha256, every
// link's target, nothing extra, the header's version. One line per problem; {} when it matches.
std::vector<std::string> entry_problems(const std::filesystem::path& dir,
                                        const store::EntryInfo& e);

} // namespace cudnnctl::ops
