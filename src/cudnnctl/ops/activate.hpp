// SPDX-License-Identifier: Apache-2.0
// Switching between what is already in the store: `use VERSION` and `rollback [--to N]`
// (the switch itself, shared with install, adopt and restore: ops/switching.hpp).
#pragma once

#include "gates/findings.hpp"
#include "ops/context.hpp"
#include "ops/switching.hpp"
#include "txn/transaction.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace cudnnctl::ops {

// --- Interface ---

// `use VERSION`: activates an installed entry as a new generation. Not installed, or
// ambiguous: ErrorCode::usage listing what is installed. Already active: no change.
[[nodiscard]] Status use(Context& ctx, const std::string& version_arg,
                         const gates::Demands& demands, SwitchResult& out);

struct RollbackResult : Outcome {
  int target = 0;
  std::string slot;                   // rollback --slot S of a non-primary slot
  std::optional<GenInfo> slot_active; // what that slot names afterwards
  std::vector<std::string> untouched; // the other active slots, unchanged ("8-cuda12 (8.9.7...)")
  enum class Said { none, rolled_back, already_active, would_roll_back } said = Said::none;
};

// Where `rollback --to` goes, parsed once at the edge: a generation number, or the store entry
// whose newest generation it is.
struct RollbackTo {
  std::variant<int, std::string> where; // the generation's number, or the entry's name
  // "7" (1 to 10^9) is generation 7; any other text names a store entry.
  static RollbackTo parse(std::string_view arg);
};

// `rollback [--to N|ENTRY]`: switches to the parent of the active generation (or N, or the
// newest generation of store entry ENTRY). Nothing before it / N or ENTRY unknown:
// ErrorCode::usage. No network, no smoke test.
// `slot`: walk that slot (`rollback --slot S`); the primary slot's id or nullopt: `current`.
[[nodiscard]] Status rollback(Context& ctx, const std::optional<RollbackTo>& to,
                              RollbackResult& out,
                              const std::optional<std::string>& slot = std::nullopt);

// `rollback --undo`: switches back to the generation that was active before the last switch
// to the active one (undoes a rollback, a `use`, an install), as recorded in history.jsonl;
// twice in a row toggles between the two. No such record: ErrorCode::nothing_to_roll_back;
// that generation deleted since: ErrorCode::no_such_generation.
[[nodiscard]] Status rollback_undo(Context& ctx, RollbackResult& out);

} // namespace cudnnctl::ops
