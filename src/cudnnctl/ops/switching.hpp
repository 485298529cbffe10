// SPDX-License-Identifier: Apache-2.0
// The switch to a store entry that every command which activates one shares (install, use,
// rollback, adopt, restore): which slot it moves, whether the entry is active already, and
// steps 7 to 12 of the protocol table in docs/ARCHITECTURE.md (a new generation, the flip,
// the post-switch checks, the commit).
#pragma once

#include "gates/findings.hpp"
#include "ops/context.hpp"
#include "txn/transaction.hpp"

#include <optional>
#include <string>

namespace cudnnctl::ops {

// --- Interface ---

// Into which slot a switch goes: the one of the primary (`current`), or the entry's own slot
// kept alongside the others (--alongside).
enum class SlotChoice { plain, alongside };
[[nodiscard]] constexpr SlotChoice slot_choice(bool alongside) {
  return alongside ? SlotChoice::alongside : SlotChoice::plain;
}

// Whether a helper says what it decided (its warnings), or only decides (a check made
// again later by the call that says it).
enum class Say { warnings, nothing };

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
                                              const std::string& version, int cuda,
                                              SlotChoice choice, Say say = Say::warnings);

// The generation that makes store entry `name` active in some slot, or nullopt.
[[nodiscard]] std::optional<int> active_generation_of(const store::StoreView& view,
                                                      const std::string& name);

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
