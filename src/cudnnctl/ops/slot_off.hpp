// SPDX-License-Identifier: Apache-2.0
// `use --none --slot S`: deactivates a slot kept alongside (store/slots.hpp) in one journaled
// transaction (txn::Intent::slot_deactivation): its pointer <prefix>/slots/S goes, the loader
// drop-in, the CUDA-home links and the module files are rewritten without it, and history
// records it. Its generations and store entry stay (`remove` then works). Rolled forward by
// recovery after a crash. The primary slot is refused: `rollback` and `adopt --undo` are its
// ways out.
#pragma once

#include "ops/context.hpp"

#include <optional>
#include <string>

namespace cudnnctl::ops {

// --- Interface ---

struct SlotOffResult : Outcome {
  std::string slot;   // the slot deactivated (or that would be, under --dry-run)
  int generation = 0; // the generation it named
  std::string entry;  // the store entry it named (kept)
};

// No --slot, the primary slot, a malformed or inactive slot: ErrorCode::usage, nothing
// changed (refused before the lock, and again under it).
[[nodiscard]] Status deactivate_slot(Context& ctx, const std::optional<std::string>& slot,
                                     SlotOffResult& out);

} // namespace cudnnctl::ops
