// SPDX-License-Identifier: Apache-2.0
// The `--slot S` option of rollback, verify, check, env and `use --none` (store/slots.hpp):
// one check of the name and one message listing the active slots, for every command.
#pragma once

#include "core/result.hpp"
#include "store/view.hpp"

#include <optional>
#include <string>

namespace cudnnctl::ops {

// --- Interface ---

// "9-cuda13 (primary), 8-cuda12": the active slots, or "none".
[[nodiscard]] std::string active_slots_listed(const store::StoreView& view);

// The slot `--slot arg` names: "" for the primary slot (nullopt, or the primary's own id),
// else a non-primary active slot's id. Not "<major>-cuda<M>", or no slot of that name is
// active: ErrorCode::usage naming the active slots.
[[nodiscard]] Result<std::string> select_slot(const store::StoreView& view,
                                              const std::optional<std::string>& arg);

} // namespace cudnnctl::ops
