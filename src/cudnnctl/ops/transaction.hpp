// SPDX-License-Identifier: Apache-2.0
// The transaction protocol every mutating command follows (docs/ARCHITECTURE.md):
// lock -> recover what an earlier command left -> journal -> mutate -> flip `current`
// -> integrate -> post-switch checks -> history -> clear the journal.
#pragma once

#include "ops/context.hpp"
#include "ops/state.hpp"
#include "ops/trust.hpp" // check_ownership
#include "store/entry.hpp"
#include "store/journal.hpp"
#include "util/lock.hpp"

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace cudnnctl::ops {

// --- Interface ---

// Takes the state lock (ErrorCode::busy past --lock-timeout), then finishes or undoes an
// interrupted transaction and removes leftovers. Keep the returned lock for the whole
// command.
[[nodiscard]] Result<util::LockFile> begin_mutation(Context& ctx);

// When an interrupted transaction left a journal, takes the lock and recovers now (then
// releases the lock). For commands that plan from the store before taking the lock: a plan
// made from a half-finished transaction's leftovers (an entry that recovery then deletes)
// would be wrong. No-op under --dry-run or without a journal.
[[nodiscard]] Status recover_pending(Context& ctx);

// The body of `recover` (and of begin_mutation's recovery): replays the journal, sweeps
// leftovers, returns a line per thing done. Needs the lock.
[[nodiscard]] Result<std::vector<std::string>> recover_interrupted(Context& ctx);

// Integration of a switch: the loader drop-in names `entry`'s lib/ (or is removed when
// nullopt), then ldconfig. Idempotent.
[[nodiscard]] Status integrate_active(Context& ctx, const std::optional<std::string>& entry);

// The flip from jr.from_generation to jr.to_generation, then integration. The caller has
// written a journal record naming jr.to_generation (recovery undoes or rolls forward by what
// `current` names); no record is written here.
[[nodiscard]] Status switch_generation(Context& ctx, store::Journal& jr);

// After a post-switch failure: phase reverting, flip back to jr.from_generation (or no
// `current` when there was none), integrate, delete what this transaction created, record
// history, clear the journal. Returns ErrorCode::rolled_back carrying `why`.
[[nodiscard]] Error revert_switch(Context& ctx, store::Journal& jr, const Error& why);

// Appends the history record of a finished transaction and clears the journal.
[[nodiscard]] Status finish_transaction(Context& ctx, const store::Journal& jr,
                                        const std::string& result, const std::string& message);

// Deletes generations (links + metadata) and store entries (renamed to .trash-* first, so
// a half-deleted entry never appears under its name). Skips anything `current` uses.
[[nodiscard]] Status delete_items(Context& ctx, const std::vector<int>& generations,
                                  const std::vector<std::string>& entries);

// Creates an empty staging directory in the store, named in the journal first (recovery
// removes it if we die).
[[nodiscard]] Result<fs::path> begin_staging(Context& ctx, store::Journal& jr);

// Writes `info` as the entry's metadata into `staging` and syncs the whole tree.
[[nodiscard]] Status seal_staging(const fs::path& staging, const store::EntryInfo& info);

// Renames a sealed staging directory to store/<jr.entry> (journal: entry owned, then
// entry-committed; hooks after-staging, after-store-commit).
[[nodiscard]] Status publish_staging(Context& ctx, store::Journal& jr, const fs::path& staging);

// After a failure before the flip: removes the staging directory, the entry and generation
// this transaction created, records history "failed" and fills the report's active
// generation (the journal stays when the cleanup fails: the next command finishes it).
void abandon_transaction(Context& ctx, store::Journal& jr, const Error& why);

// Next free generation number (above every link, metadata file and history record).
[[nodiscard]] Result<int> next_generation_number(Context& ctx, const StoreView& view);

// {"generation": n, "version": v} for history records (null when n is unset).
nlohmann::json gen_ref(const Context& ctx, const StoreView& view, std::optional<int> n);

} // namespace cudnnctl::ops
