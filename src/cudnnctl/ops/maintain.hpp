// SPDX-License-Identifier: Apache-2.0
// Commands that delete or repair: `remove VERSION`, `gc [--keep N] [--cache]`, `recover`.
#pragma once

#include "ops/context.hpp"

#include <optional>
#include <string>

namespace cudnnctl::ops {

// --- Interface ---

// Removes the installed builds matching VERSION and their generations. Never the active
// one (ErrorCode::usage), never one a running process maps (ErrorCode::environment, unless
// --force). Not installed: ErrorCode::usage.
[[nodiscard]] Status remove(Context& ctx, const std::string& version_arg);

// Keeps `keep` generations: the active one and those `rollback` would walk back to from it
// (the newest ones when none is active); deletes the others and the store entries no kept
// generation uses, sparing entries a running process maps (listed in
// data.spared). `cache`: also empties the download cache.
[[nodiscard]] Status gc(Context& ctx, std::optional<int> keep, bool cache);

// Finishes or undoes an interrupted command and removes leftovers.
[[nodiscard]] Status recover(Context& ctx);

} // namespace cudnnctl::ops
