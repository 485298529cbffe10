// SPDX-License-Identifier: Apache-2.0
// Switching between what is already in the store: `use VERSION`, `rollback [--to N]`, and
// the tail every install shares (new generation -> switch -> post-switch checks -> commit).
#pragma once

#include "ops/context.hpp"
#include "ops/install.hpp"
#include "ops/state.hpp"
#include "store/journal.hpp"

#include <optional>
#include <string>

namespace cudnnctl::ops {

// --- Interface ---

// `use VERSION`: activates an installed entry as a new generation. Not installed, or
// ambiguous: ErrorCode::usage listing what is installed. Already active: no change.
[[nodiscard]] Status use(Context& ctx, const std::string& version_arg,
                         const InstallOptions& checks);

// `rollback [--to N]`: switches to the parent of the active generation (or N). Nothing
// before it / N unknown: ErrorCode::usage. No network, no smoke test.
[[nodiscard]] Status rollback(Context& ctx, std::optional<int> to);

// Takes the lock and activates store entry `name` as a new generation (dry-run aware).
[[nodiscard]] Status activate_entry(Context& ctx, const std::string& name,
                                    const std::string& command, const InstallOptions& checks = {});

// Same, with the lock already held.
[[nodiscard]] Status activate_entry_locked(Context& ctx, const std::string& name,
                                           const std::string& command,
                                           const InstallOptions& checks);

// Creates generation next for jr.entry (parent: the active one), switches to it, runs the
// post-switch `checks` unless nullopt (reverting on failure: ErrorCode::rolled_back),
// commits and fills the report. A failure before the flip undoes what the transaction
// created (abandon_transaction).
[[nodiscard]] Status switch_to_new_generation(Context& ctx, store::Journal& jr,
                                              const StoreView& view, const std::string& command,
                                              const std::optional<InstallOptions>& checks);

// "cuDNN V (CUDA C, P) is active as generation N: PATH", from the report's active generation.
void say_active(Context& ctx);

} // namespace cudnnctl::ops
