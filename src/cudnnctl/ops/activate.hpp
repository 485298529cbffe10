// SPDX-License-Identifier: Apache-2.0
// Switching between what is already in the store: `use VERSION`, `rollback [--to N]`, and
// the tail every new generation shares (install, use, adopt, restore: steps 7 to 12 of the
// protocol table in docs/ARCHITECTURE.md).
#pragma once

#include "gates/findings.hpp"
#include "ops/context.hpp"
#include "txn/transaction.hpp"

#include <optional>
#include <string>

namespace cudnnctl::ops {

// --- Interface ---

// How a switch to a stored entry ended, for the human output.
enum class Switched {
  none,             // failed before it could say
  activated,        // a new generation is active
  already_active,   // nothing to do ("cuDNN <described> is already active")
  would_activate,   // --dry-run
  would_not_change, // --dry-run, the entry is active ("<entry> is already active")
};

struct SwitchResult : Outcome {
  gates::Findings findings;
  std::string entry;     // the entry switched to
  std::string described; // store::describe() of it, for already_active
  Switched said = Switched::none;
  // A switch of a non-primary slot (--alongside): its id and what it names afterwards
  // (`active` stays the primary slot's, as the contract says).
  std::string slot;
  std::optional<GenInfo> slot_active;
};

// The slot a switch to `entry` moves (store/slots.hpp): "" for the primary slot (`current`),
// else the entry's slot id (`alongside`, a slot other than the primary's). `--alongside` into
// the primary slot, or with nothing active, is a plain switch (a warning says so). A plain
// switch into a slot that is active alongside is refused (ErrorCode::usage): the slot would
// have two versions.
[[nodiscard]] Result<std::string> switch_slot(Context& ctx, const store::StoreView& view,
                                              const std::string& version, int cuda, bool alongside,
                                              bool say = true);

// The generation that makes store entry `name` active in some slot, or nullopt.
[[nodiscard]] std::optional<int> active_generation_of(const store::StoreView& view,
                                                      const std::string& name);

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

// `rollback [--to N|ENTRY]`: switches to the parent of the active generation (or N, or the
// newest generation of store entry ENTRY). Nothing before it / N or ENTRY unknown:
// ErrorCode::usage. No network, no smoke test.
// `slot`: walk that slot (`rollback --slot S`); the primary slot's id or nullopt: `current`.
[[nodiscard]] Status rollback(Context& ctx, const std::optional<std::string>& to,
                              RollbackResult& out,
                              const std::optional<std::string>& slot = std::nullopt);

// `rollback --undo`: switches back to the generation that was active before the last switch
// to the active one (undoes a rollback, a `use`, an install), as recorded in history.jsonl;
// twice in a row toggles between the two. No such record: ErrorCode::nothing_to_roll_back;
// that generation deleted since: ErrorCode::no_such_generation.
[[nodiscard]] Status rollback_undo(Context& ctx, RollbackResult& out);

// Takes the lock and activates store entry `name` as a new generation (dry-run aware).
[[nodiscard]] Status activate_entry(Context& ctx, const std::string& name,
                                    const std::string& command, const gates::Demands& demands,
                                    SwitchResult& out);

// Same, with the lock already held.
[[nodiscard]] Status activate_entry_locked(Context& ctx, const txn::Lock& lock,
                                           const std::string& name, const std::string& command,
                                           const gates::Demands& demands, SwitchResult& out);

// Steps 7 to 12 for the transaction's entry `entry`: a new generation (its parent the one
// active in the transaction's slot), the flip, the post-switch checks unless `checks` is nullopt (a
// failure reverts: ErrorCode::rolled_back), the commit; then `out` says what is active. Returns the
// generation's number.
[[nodiscard]] Result<int> activate_new_generation(Context& ctx, txn::Transaction& tx,
                                                  const std::string& entry,
                                                  const std::string& command,
                                                  const std::optional<gates::Demands>& checks,
                                                  gates::Findings& findings, Outcome& out);

} // namespace cudnnctl::ops
